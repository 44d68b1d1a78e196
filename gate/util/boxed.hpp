#pragma once

#include <memory>
#include <utility>

namespace gate {

// An optional value kept on the heap, with value semantics (copies copy the
// value). For a member that is rare but large: a run of a 100,000-task
// report pays one pointer for it instead of the whole value, which an
// std::optional would hold inline in every run.
template <class T> class Boxed {
public:
  Boxed() = default;
  Boxed(const Boxed& o) : p_(o.p_ ? std::make_unique<T>(*o.p_) : nullptr) {}
  Boxed(Boxed&&) noexcept = default;
  Boxed& operator=(const Boxed& o) {
    if (this != &o) p_ = o.p_ ? std::make_unique<T>(*o.p_) : nullptr;
    return *this;
  }
  Boxed& operator=(Boxed&&) noexcept = default;
  Boxed& operator=(T value) {
    p_ = std::make_unique<T>(std::move(value));
    return *this;
  }
  ~Boxed() = default;

  template <class... Args> T& emplace(Args&&... args) {
    p_ = std::make_unique<T>(std::forward<Args>(args)...);
    return *p_;
  }
  void reset() { p_.reset(); }
  explicit operator bool() const { return p_ != nullptr; }
  bool has_value() const { return p_ != nullptr; }
  T& operator*() { return *p_; }
  const T& operator*() const { return *p_; }
  T* operator->() { return p_.get(); }
  const T* operator->() const { return p_.get(); }

private:
  std::unique_ptr<T> p_;
};

} // namespace gate

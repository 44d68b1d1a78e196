#pragma once

#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include <gate/proxy/pacing.hpp>

namespace gate::proxy {

// Writes one HTTP response on `Stream` by a plan_replay() schedule, counted
// from `start` (when the request arrived): with no steps at once; with one
// step whole, once its time has come; with more, in chunked transfer
// coding, one chunk per step, each when its time has come. Timers, not
// sleeps: the thread serves other connections while a reply waits. The
// owner must keep `stream` alive until `done` runs (capture it in `done`).
// With `Chunked` false, more than one step is sent whole at the last
// step's time, as to an HTTP/1.0 client; that leaves out the chunked
// coding's templates, which weigh a lot in a TU that needs no chunks.
template <class Stream, bool Chunked = true>
class PacedWrite : public std::enable_shared_from_this<PacedWrite<Stream, Chunked>> {
public:
  using Clock = std::chrono::steady_clock;
  using Response = boost::beast::http::response<boost::beast::http::string_body>;
  using Done = std::function<void(boost::system::error_code)>;

  // `res` is complete (body and headers); a Content-Length in it is dropped
  // when the reply goes out in chunks.
  PacedWrite(Stream& stream, Response res, std::vector<Step> steps, Clock::time_point start, Done done)
      : stream_(stream), timer_(stream.get_executor()), res_(std::move(res)), steps_(std::move(steps)),
        start_(start), done_(std::move(done)) {}

  void run() {
    // HTTP/1.0 has no chunked coding: such a client gets the whole reply
    // at the time of its last part.
    if (steps_.size() <= 1 || res_.version() < 11 || !Chunked) {
      if (steps_.empty()) return write_whole();
      return at(steps_.back().at_ms, [](PacedWrite& self) { self.write_whole(); });
    }
    if constexpr (Chunked) write_chunked();
  }

private:
  void write_chunked() {
    namespace http = boost::beast::http;
    header_.emplace(res_.result(), res_.version());
    for (const auto& field : res_.base())
      if (field.name() != http::field::content_length && field.name() != http::field::transfer_encoding)
        header_->set(field.name_string(), field.value());
    header_->keep_alive(res_.keep_alive());
    header_->chunked(true);
    serializer_.emplace(*header_);
    http::async_write_header(stream_, *serializer_,
                             [self = this->shared_from_this()](boost::system::error_code ec, std::size_t) {
                               if (ec) return self->done_(ec);
                               self->send_step(0);
                             });
  }

  template <class F> void at(double ms, F f) {
    timer_.expires_at(
        start_ + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double, std::milli>(ms)));
    timer_.async_wait([self = this->shared_from_this(), f](boost::system::error_code) { f(*self); });
  }

  void write_whole() {
    boost::beast::http::async_write(
        stream_, res_,
        [self = this->shared_from_this()](boost::system::error_code ec, std::size_t) { self->done_(ec); });
  }

  void send_step(std::size_t i) {
    namespace http = boost::beast::http;
    if (i == steps_.size()) {
      return boost::asio::async_write(
          stream_, http::make_chunk_last(),
          [self = this->shared_from_this()](boost::system::error_code ec, std::size_t) { self->done_(ec); });
    }
    at(steps_[i].at_ms, [i](PacedWrite& self) {
      const std::size_t from = i == 0 ? 0 : self.steps_[i - 1].end;
      const std::size_t size = self.steps_[i].end - from;
      // A chunk of size 0 would be the last-chunk marker.
      if (size == 0) return self.send_step(i + 1);
      boost::asio::async_write(
          self.stream_, http::make_chunk(boost::asio::const_buffer(self.res_.body().data() + from, size)),
          [s = self.shared_from_this(), i](boost::system::error_code ec, std::size_t) {
            if (ec) return s->done_(ec);
            s->send_step(i + 1);
          });
    });
  }

  Stream& stream_;
  boost::asio::steady_timer timer_;
  Response res_;
  std::vector<Step> steps_;
  Clock::time_point start_;
  Done done_;
  std::optional<boost::beast::http::response<boost::beast::http::empty_body>> header_;
  std::optional<boost::beast::http::response_serializer<boost::beast::http::empty_body>> serializer_;
};

} // namespace gate::proxy

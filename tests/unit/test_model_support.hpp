#pragma once

// Shared by the test_model_* files: a response as the client hands it over.

#include <string>
#include <utility>

#include <gate/model/api.hpp>

namespace gate::model::test {

inline ApiResponse response(int status, std::string body) {
  ApiResponse r;
  r.status = status;
  r.body = std::move(body);
  return r;
}

} // namespace gate::model::test

#pragma once

#include <string>

namespace gate {

// Current UTC time as ISO 8601 with seconds, "2026-11-29T09:10:11Z".
std::string utc_now_iso();

} // namespace gate

#pragma once

#include <atomic>

namespace gate::cli {

// SIGINT/SIGTERM set a flag: runs in flight finish (so no cache entry is
// half-written), no new run starts, and the partial report is marked
// incomplete. A second signal ends the process at once.
void install_stop_handlers();
const std::atomic<bool>& stop_requested();
// 130 after SIGINT, 143 after SIGTERM, 0 when no signal came.
int stop_exit_code();

} // namespace gate::cli

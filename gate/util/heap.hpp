#pragma once

#ifdef __GLIBC__
#include <malloc.h>
#endif

namespace gate {

// glibc grows a worker thread's own heap one page at a time, with an
// mprotect call each: tens of thousands of calls (a twentieth of the CPU)
// when a second thread builds a 100,000-task report or replays 100,000
// runs. A top pad just under the 64 MB heap size makes each new heap usable
// whole at once; memory is still committed only when touched, so the
// resident size does not change. For commands that build large results on
// several threads; call it before they start.
inline void pad_thread_heaps() {
#ifdef __GLIBC__
  mallopt(M_TOP_PAD, 63 << 20);
#endif
}

} // namespace gate

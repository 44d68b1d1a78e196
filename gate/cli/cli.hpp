#pragma once

namespace gate::cli {

// The whole program: dispatches to a command and turns any error into a
// message on stderr and an exit code. The only catch-all in gate.
int main(int argc, char** argv);

} // namespace gate::cli

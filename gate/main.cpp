#include <gate/cli/cli.hpp>

int main(int argc, char** argv) { return gate::cli::main(argc, argv); }

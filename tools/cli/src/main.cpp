// The `remat` tool: plan, inspect and draw checkpointing schedules.
#include "app.hpp"

#include <cerrno>
#include <cstdio>
#include <iostream>
#include <system_error>

int main(int argc, char** argv)
{
    std::ios::sync_with_stdio(false);
    const int status = remat::cli::run(argc, argv, std::cout, std::cerr);
    errno = 0;
    std::cout.flush();
    if (std::cout)
        return status;
    // Output that did not reach its destination (a full disk, a closed descriptor) is a failure, said in one
    // line like any other; a command that failed has said why already.
    if (status == 0) {
        const int err = errno;
        std::fprintf(stderr, "remat: cannot write the output to standard output%s%s\n", err != 0 ? ": " : "",
                     err != 0 ? std::system_category().message(err).c_str() : "");
    }
    return status == 0 ? 1 : status;
}

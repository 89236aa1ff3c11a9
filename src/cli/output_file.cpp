#include "output_file.hpp"

#include "remat/error.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <unistd.h>

namespace remat::cli {

void write_file_atomically(const std::string& path, const std::function<void(std::ostream&)>& write)
{
    const std::string temporary = path + ".tmp." + std::to_string(::getpid());
    try {
        std::ofstream file(temporary, std::ios::binary | std::ios::trunc);
        if (!file)
            throw io_error("cannot create " + temporary + ": " + std::strerror(errno));
        write(file);
        file.flush();
        if (!file)
            throw io_error("cannot write " + path + ": " + std::strerror(errno));
        file.close();
        if (std::rename(temporary.c_str(), path.c_str()) != 0)
            throw io_error("cannot rename " + temporary + " to " + path + ": " + std::strerror(errno));
    } catch (...) {
        std::remove(temporary.c_str());
        throw;
    }
}

} // namespace remat::cli

#include "memory_file.hpp"

#include "remat/hdf5_internal/hdf5_handle.hpp"

#include <cstdlib>
#include <cstring>

namespace remat::detail {
namespace {

// The core driver's memory, through callbacks so that its last contents can be kept when the file
// closes. (H5Fget_file_image would be simpler, but HDF5 1.10.8 writes a wrong superblock checksum into
// the image of a file in the 1.8 format, which then does not open.)
struct capture {
    std::size_t size = 0; // the image's length, known before the file closes
    std::vector<unsigned char> bytes;
};

void* image_malloc(std::size_t size, H5FD_file_image_op_t, void*)
{
    return std::malloc(size); // NOLINT: HDF5 frees it through image_free
}

void* image_memcpy(void* to, const void* from, std::size_t size, H5FD_file_image_op_t, void*)
{
    return std::memcpy(to, from, size);
}

void* image_realloc(void* p, std::size_t size, H5FD_file_image_op_t, void*)
{
    return std::realloc(p, size); // NOLINT
}

herr_t image_free(void* p, H5FD_file_image_op_t op, void* data)
{
    auto& c = *static_cast<capture*>(data);
    if (p != nullptr && op == H5FD_FILE_IMAGE_OP_FILE_CLOSE && c.size > 0) {
        const auto* bytes = static_cast<const unsigned char*>(p);
        c.bytes.assign(bytes, bytes + c.size);
    }
    std::free(p); // NOLINT
    return 0;
}

void* udata_copy(void* data)
{
    return data; // the capture outlives every copy of the property list
}

herr_t udata_free(void*)
{
    return 0;
}

} // namespace

std::vector<unsigned char> build_in_memory(hid_t fapl, const std::string& name,
                                           const std::function<void(hid_t file)>& build)
{
    capture c;
    const hdf5_plist memory(check_id(H5Pcopy(fapl), "cannot copy HDF5 file access properties"));
    check_status(H5Pset_fapl_core(memory.get(), std::size_t{64} << 10, 0), "cannot select HDF5's core driver");
    H5FD_file_image_callbacks_t callbacks{
        image_malloc, image_memcpy, image_realloc, image_free, udata_copy, udata_free, &c};
    check_status(H5Pset_file_image_callbacks(memory.get(), &callbacks), "cannot set HDF5 file image callbacks");
    hdf5_file file(H5Fcreate(name.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, memory.get()));
    check_id(file.get(), "cannot make " + name + " in memory");
    build(file.get());
    check_status(H5Fflush(file.get(), H5F_SCOPE_LOCAL), "cannot flush " + name + " in memory");
    const ssize_t size = H5Fget_file_image(file.get(), nullptr, 0);
    if (size <= 0)
        throw_hdf5<io_error>("cannot size the image of " + name);
    c.size = static_cast<std::size_t>(size);
    if (!file.reset())
        throw_hdf5<io_error>("cannot close " + name + " in memory");
    if (c.bytes.size() != c.size)
        throw io_error("HDF5 did not hand back the image of " + name);
    return std::move(c.bytes);
}

} // namespace remat::detail

#include "write_intent.hpp"

#include "snapshot_format.hpp"

#include "remat/detail/xxh64.hpp"

#include <algorithm>
#include <cstring>
#include <vector>

namespace remat::detail {
namespace {

constexpr char tag[8] = {'r', 'm', 't', '-', 'w', 'i', '0', '1'};
constexpr std::size_t hashed_bytes = write_intent_record_bytes - 8;

void put_u64(std::byte* at, std::uint64_t v) noexcept
{
    for (int i = 0; i < 8; ++i)
        at[i] = static_cast<std::byte>((v >> (8 * i)) & 0xff);
}

std::uint64_t get_u64(const std::byte* at) noexcept
{
    std::uint64_t v = 0;
    for (int i = 0; i < 8; ++i)
        v |= static_cast<std::uint64_t>(at[i]) << (8 * i);
    return v;
}

} // namespace

void write_intent::unkeep(slot_t slot)
{
    for (std::size_t i = 0; i < kept.size(); ++i) {
        const slot_range r = kept[i];
        if (!r.holds(slot))
            continue;
        const slot_range below{r.first, slot};
        const slot_range above{slot + 1, r.end};
        kept.erase(kept.begin() + static_cast<std::ptrdiff_t>(i));
        if (kept.size() + 2 <= write_intent_kept_ranges) {
            for (const slot_range& part : {below, above})
                if (part.first < part.end)
                    kept.push_back(part);
        } else {
            const slot_range& longer = below.end - below.first >= above.end - above.first ? below : above;
            if (longer.first < longer.end)
                kept.push_back(longer);
        }
        return;
    }
}

std::array<std::byte, write_intent_record_bytes> encode_write_intent(const write_intent& intent) noexcept
{
    std::array<std::byte, write_intent_record_bytes> out{};
    std::memcpy(out.data(), tag, sizeof tag);
    const std::size_t kept = std::min(intent.kept.size(), write_intent_kept_ranges);
    put_u64(out.data() + 8, intent.sequence);
    put_u64(out.data() + 16, static_cast<std::uint64_t>(intent.writing.first));
    put_u64(out.data() + 24, static_cast<std::uint64_t>(intent.writing.end));
    put_u64(out.data() + 32, static_cast<std::uint64_t>(intent.unsettled));
    put_u64(out.data() + 40, kept);
    for (std::size_t i = 0; i < kept; ++i) {
        put_u64(out.data() + 48 + 16 * i, static_cast<std::uint64_t>(intent.kept[i].first));
        put_u64(out.data() + 56 + 16 * i, static_cast<std::uint64_t>(intent.kept[i].end));
    }
    put_u64(out.data() + hashed_bytes, xxh64(out.data(), hashed_bytes));
    return out;
}

std::optional<write_intent> decode_write_intent(std::span<const std::byte> bytes)
{
    if (bytes.size() < write_intent_record_bytes || std::memcmp(bytes.data(), tag, sizeof tag) != 0 ||
        get_u64(bytes.data() + hashed_bytes) != xxh64(bytes.data(), hashed_bytes))
        return std::nullopt;
    const std::uint64_t kept = get_u64(bytes.data() + 40);
    if (kept > write_intent_kept_ranges)
        return std::nullopt;
    write_intent w;
    w.sequence = get_u64(bytes.data() + 8);
    w.writing.first = static_cast<slot_t>(get_u64(bytes.data() + 16));
    w.writing.end = static_cast<slot_t>(get_u64(bytes.data() + 24));
    w.unsettled = static_cast<slot_t>(get_u64(bytes.data() + 32));
    for (std::size_t i = 0; i < kept; ++i)
        w.kept.push_back({static_cast<slot_t>(get_u64(bytes.data() + 48 + 16 * i)),
                          static_cast<slot_t>(get_u64(bytes.data() + 56 + 16 * i))});
    return w;
}

void create_write_intent(hid_t file, const std::string& where)
{
    const std::string what = where + ": cannot make /" + write_intent_dataset_name;
    const hsize_t dims[1] = {write_intent_bytes};
    hdf5_dataspace space(check_id(H5Screate_simple(1, dims, nullptr), what));
    hdf5_plist dcpl(check_id(H5Pcreate(H5P_DATASET_CREATE), what));
    check_status(H5Pset_obj_track_times(dcpl.get(), 0), what);
    // Contiguous and allocated now: its bytes have a fixed place that the store rewrites in place.
    check_status(H5Pset_layout(dcpl.get(), H5D_CONTIGUOUS), what);
    check_status(H5Pset_alloc_time(dcpl.get(), H5D_ALLOC_TIME_EARLY), what);
    hdf5_dataset d(check_id(
        H5Dcreate2(file, write_intent_dataset_name, H5T_STD_U8LE, space.get(), H5P_DEFAULT, dcpl.get(), H5P_DEFAULT),
        what));
    std::vector<std::byte> zeros(write_intent_bytes);
    check_status(H5Dwrite(d.get(), H5T_NATIVE_UINT8, H5S_ALL, H5S_ALL, H5P_DEFAULT, zeros.data()), what);
}

std::optional<write_intent_place> read_write_intent(hid_t file)
{
    if (H5Lexists(file, write_intent_dataset_name, H5P_DEFAULT) <= 0) {
        hdf5_error_text(); // clear the stack
        return std::nullopt;
    }
    hdf5_dataset d(H5Dopen2(file, write_intent_dataset_name, H5P_DEFAULT));
    const std::optional<std::uint64_t> offset = d ? dataset_offset(d.get()) : std::nullopt;
    hdf5_dataspace space(d ? H5Dget_space(d.get()) : H5I_INVALID_HID);
    std::vector<std::byte> bytes(write_intent_bytes);
    if (!offset || !space || H5Sget_simple_extent_npoints(space.get()) != static_cast<hssize_t>(write_intent_bytes) ||
        H5Dread(d.get(), H5T_NATIVE_UINT8, H5S_ALL, H5S_ALL, H5P_DEFAULT, bytes.data()) < 0) {
        hdf5_error_text();
        return std::nullopt;
    }
    write_intent_place place;
    place.offset = *offset;
    for (std::size_t copy = 0; copy < 2; ++copy) {
        const std::optional<write_intent> w = decode_write_intent(
            std::span<const std::byte>(bytes).subspan(copy * write_intent_copy_bytes, write_intent_copy_bytes));
        if (w && w->sequence >= place.latest.sequence)
            place.latest = *w;
    }
    return place;
}

} // namespace remat::detail

#include "remat/hdf5/hdf5_store.hpp"

#include "file_claim.hpp"
#include "raw_file.hpp"
#include "remat/hdf5_internal/fault_hook.hpp"
#include "snapshot_format.hpp"
#include "write_intent.hpp"

#include "remat/detail/xxh64.hpp"
#include "remat/error.hpp"
#include "remat/hdf5_internal/hdf5_handle.hpp"
#include "remat/store/detail/describe_snapshot.hpp"
#include "remat/store/detail/part_layout.hpp"
#include "remat/store/detail/slot_checks.hpp"
#include "remat/store/detail/store_capacity.hpp"
#include "remat/store/detail/use_copier.hpp"
#include "remat/store/level_accounting.hpp"

#include <algorithm>
#include <array>
#include <cinttypes>
#include <cstdio>
#include <optional>
#include <span>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

namespace remat {
namespace {

using detail::check_status;
using detail::hdf5_dataset;
using detail::hdf5_scope;
using detail::slot_state;
using detail::snapshot_record;

} // namespace

struct hdf5_store::impl {
    struct slot_entry {
        std::string group;         // the slot's group under /snapshots, "" until it has one
        std::string dataset;       // its current dataset in that group, "" when none
        unsigned next_group = 0;   // generations for replacements of what cannot be deleted
        unsigned next_dataset = 0; //   (see detail::slot_group_name)
        bool usable = false;       // this store's own dataset: it can be rewritten in place, or deleted
        bool compressed = false;
        hdf5_element element = hdf5_element::uint8;
        std::uint64_t dataset_bytes = 0;
        step_t step = -1; // the snapshot held, -1 for none
        std::uint64_t bytes = 0;
        std::string problem;       // why a resumed file's slot holds no snapshot, for error messages
        detail::part_layout parts; // the sizes of the parts of the snapshot held
    };

    std::filesystem::path path;
    std::string where;
    std::string identity; // the run identity the file records
    level_capacity capacity;
    options opts;
    detail::file_claim claim; // released after the file is closed (members are destroyed in reverse order)
    detail::snapshot_file file;
    std::unique_ptr<detail::raw_file> raw;
    std::vector<slot_entry> slots;
    std::uint64_t allocated = 0;         // bytes of the usable slot datasets in the file
    std::uint64_t reserved_end = 0;      // the file has blocks up to here
    std::uint64_t guarded_end = 0;       // the end of file just after this session's last guard byte
    std::uint64_t groups_in_advance = 0; // slots 0 .. this-1 got their groups when the file was made
    level_accounting counts;
    std::optional<std::uint64_t> intent_at; // where /write_intent's bytes start (none in an older remat's file)
    detail::write_intent intent;            // the record last written there
    slot_t unsettled = -1;                  // a failed write's slot whose metadata changes are not in the file yet
    bool open = false;
    detail::hdf5_fault_hook* faults = nullptr; // test-only (fault_hook.hpp)
    hdf5_scope* scope = nullptr;               // the scope of the call in progress (see unlocked)

    // Makes a public call's scope the one `unlocked` releases, for the duration of the call.
    struct bind_scope {
        impl& s;
        bind_scope(impl& store, hdf5_scope& sc) : s(store) { s.scope = &sc; }
        ~bind_scope() { s.scope = nullptr; }
        bind_scope(const bind_scope&) = delete;
        bind_scope& operator=(const bind_scope&) = delete;
    };

    // Runs a transfer that makes no HDF5 call with remat's HDF5 lock released (other stores' HDF5 calls
    // go on meanwhile).
    template <class F>
    decltype(auto) unlocked(F&& f)
    {
        if (scope == nullptr)
            return std::forward<F>(f)();
        return scope->without_lock(std::forward<F>(f));
    }

    [[nodiscard]] std::string context(slot_t slot, const std::string& dataset) const
    {
        const slot_entry& e = slots[static_cast<std::size_t>(slot)];
        return where + ": /" + detail::snapshots_group_name + "/" + e.group + "/" + dataset;
    }
    [[nodiscard]] std::string context(slot_t slot) const
    {
        return context(slot, slots[static_cast<std::size_t>(slot)].dataset);
    }
    [[nodiscard]] std::string dataset_path(const slot_entry& e) const { return e.group + "/" + e.dataset; }

    // A fault the test hook asks for fails the transfer as the operating system would.
    void injected_fault(bool write, slot_t slot, step_t step, std::uint64_t offset, std::size_t bytes) const
    {
        if (faults == nullptr)
            return;
        if (const int err = faults->before_transfer(write, slot, step, offset, bytes))
            throw io_error(std::string(write ? "writing" : "reading") + " " + std::to_string(bytes) +
                           " bytes at offset " + std::to_string(offset) +
                           " failed: " + std::system_category().message(err));
    }

    // The write intent (write_intent.hpp): before a slot's metadata changes, the file says which slots may
    // be torn, so that a reader takes a kill's damage there for a write cut short, not for a lost commit.
    void put_intent(detail::write_intent next)
    {
        next.sequence = intent.sequence + 1;
        next.unsettled = unsettled;
        const std::array<std::byte, detail::write_intent_record_bytes> bytes = detail::encode_write_intent(next);
        const const_bytes record{bytes.data(), bytes.size(), memory_space::host};
        raw->write(detail::write_intent_copy_offset(*intent_at, next.sequence), const_parts(&record, 1), opts.copy);
        intent = next;
    }

    // Slots [first, end) are about to change.
    void announce(slot_t first, slot_t end)
    {
        if (!intent_at)
            return;
        detail::write_intent next = intent;
        next.writing = {first, end};
        put_intent(next);
    }

    // The write in progress is over. A slot now holding a committed snapshot (`written`, or -1) has set
    // aside whatever an earlier run left torn in it (a new generation supersedes it), so it is no longer
    // kept named.
    void settle(slot_t written)
    {
        if (!intent_at)
            return;
        detail::write_intent next = intent;
        next.writing = {};
        if (written >= 0)
            next.unkeep(written);
        put_intent(next);
    }

    // A write failed: its slot may have metadata changes that only a later flush puts in the file, so the
    // intent keeps naming it until then. Best effort: the caller reports the write's own error.
    void after_failed_write(slot_t slot) noexcept
    {
        unsettled = slot;
        try {
            settle(-1);
        } catch (...) { // NOLINT(bugprone-empty-catch): the intent on file still names the slot
        }
    }

    // Resume: the slots the killed run's intent named that still hold no snapshot stay named (in runs of
    // consecutive slots) until written again, since HDF5 can delete neither their torn objects nor the links
    // to them.
    void keep_torn_slots(const detail::write_intent& found)
    {
        intent = found;
        intent.writing = {};
        intent.unsettled = -1;
        intent.kept.clear();
        for (std::size_t i = 0; i < slots.size(); ++i) {
            const auto slot = static_cast<slot_t>(i);
            if (!found.names(slot) || slots[i].step >= 0)
                continue;
            if (!intent.kept.empty() && intent.kept.back().end == slot)
                ++intent.kept.back().end;
            else if (intent.kept.size() < detail::write_intent_kept_ranges)
                intent.kept.push_back({slot, slot + 1});
        }
    }

    void require_open() const
    {
        if (!open)
            throw argument_error("hdf5_store for " + where + " is closed");
    }

    void grow(std::size_t size)
    {
        const std::size_t before = slots.size();
        if (size <= before)
            return;
        detail::grow_slot_table(slots, static_cast<slot_t>(size - 1), "disk");
        for (std::size_t s = before; s < size; ++s)
            if (s < groups_in_advance) {
                slots[s].group = detail::slot_group_name(static_cast<slot_t>(s));
                slots[s].next_group = 1;
            }
    }

    slot_entry& entry(slot_t slot, bool may_grow)
    {
        if (slot < 0 || slot >= capacity.slots)
            throw schedule_error("slot " + std::to_string(slot) + " is outside the disk store's " +
                                 detail::describe_slots(capacity.slots) + " slots");
        if (static_cast<std::size_t>(slot) >= slots.size()) {
            if (!may_grow)
                throw schedule_error("slot " + std::to_string(slot) + " of the disk store was never written");
            grow(static_cast<std::size_t>(slot) + 1);
        }
        return slots[static_cast<std::size_t>(slot)];
    }

    // Metadata to the file, after giving the file blocks for everything HDF5 has allocated since the last
    // time: a full disk then fails here, before HDF5 writes anything, instead of half way through its
    // metadata.
    //
    // The file also ends with a guard byte that no object owns (detail::guard_end_of_file), so that no later
    // deletion can move HDF5's end of file below what the superblock on disk says.
    void flush_metadata()
    {
        const std::uint64_t eoa = detail::guard_end_of_file(file.file.get(), guarded_end, where);
        if (eoa > reserved_end)
            raw->reserve(reserved_end, eoa - reserved_end);
        check_status(H5Fflush(file.file.get(), H5F_SCOPE_LOCAL), "cannot flush the metadata of " + where);
        reserved_end = eoa;
        unsettled = -1; // every change made so far is in the file
    }

    hdf5_dataset open_dataset(slot_t slot, bool for_read) const
    {
        const slot_entry& e = slots[static_cast<std::size_t>(slot)];
        hdf5_dataset d(H5Dopen2(file.snapshots.get(), dataset_path(e).c_str(), H5P_DEFAULT));
        if (!d) {
            const std::string what = context(slot) + ": cannot open the dataset";
            if (for_read)
                detail::throw_hdf5<integrity_error>(what);
            detail::throw_hdf5<io_error>(what);
        }
        return d;
    }

    // A slot without a usable group: one made on demand beyond those made in advance, or a later
    // generation replacing a damaged group. Creating groups changes the index of /snapshots, the one
    // metadata write whose interruption could affect other slots, so it is rare (slots are prepared in
    // batches that double) and flushed on its own, before any snapshot data moves.
    void ensure_group(slot_t slot)
    {
        if (!slots[static_cast<std::size_t>(slot)].group.empty())
            return;
        const std::uint64_t batch =
            std::clamp<std::uint64_t>(slots.size(), detail::slot_groups_in_advance, detail::slot_groups_batch_max);
        const std::uint64_t last = std::min<std::uint64_t>(static_cast<std::uint64_t>(capacity.slots),
                                                           static_cast<std::uint64_t>(slot) + batch);
        grow(static_cast<std::size_t>(last));
        announce(slot, static_cast<slot_t>(last)); // the new groups' headers may be torn too
        for (auto s = static_cast<std::size_t>(slot); s < last; ++s) {
            slot_entry& e = slots[s];
            if (!e.group.empty())
                continue;
            const std::string name = detail::slot_group_name(static_cast<slot_t>(s), e.next_group);
            detail::create_slot_group(file.snapshots.get(), name, where);
            e.group = name;
            ++e.next_group;
            e.next_dataset = 0;
        }
        flush_metadata();
    }

    // Removes the slot's current dataset (its space is reused by later datasets). One too damaged to
    // delete keeps its name, so false tells the caller to use the next generation's name.
    bool discard_dataset(slot_entry& e)
    {
        bool deleted = true;
        if (H5Ldelete(file.snapshots.get(), dataset_path(e).c_str(), H5P_DEFAULT) < 0) {
            detail::hdf5_error_text();
            deleted = false;
        }
        forget_dataset(e);
        return deleted;
    }

    // The slot has no dataset any more (its bytes no longer count as allocated).
    void forget_dataset(slot_entry& e)
    {
        allocated -= e.usable ? e.dataset_bytes : 0;
        e.dataset.clear();
        e.usable = false;
        e.dataset_bytes = 0;
    }

    // The record of x_step while it is being written into a slot (with the sizes of its parts when there
    // are two or more).
    static snapshot_record writing_record(slot_t slot, step_t step, std::uint64_t bytes, hdf5_element element,
                                          const_parts parts = {})
    {
        snapshot_record r;
        r.slot = slot;
        r.step = step;
        r.bytes = bytes;
        r.element = element;
        r.state = slot_state::writing;
        if (parts.size() >= 2)
            for (const const_bytes& p : parts)
                r.parts.push_back(p.size);
        return r;
    }

    void write_in_place(slot_t slot, step_t step, const_parts parts)
    {
        const const_bytes src{nullptr, total_bytes(parts), memory_space::host}; // the whole snapshot
        const std::string ctx = context(slot);
        hdf5_dataset d = open_dataset(slot, false);
        const std::optional<std::uint64_t> offset = detail::dataset_offset(d.get());
        if (!offset && src.size > 0)
            throw io_error(ctx + ": the dataset has no contiguous storage to write into");
        snapshot_record r = writing_record(slot, step, src.size, opts.element, parts);
        // First the file says the slot is being written, so that a write cut short reads as interrupted.
        detail::write_record(d.get(), r, ctx);
        flush_metadata();
        injected_fault(true, slot, step, offset.value_or(0), src.size);
        r.checksum = unlocked([&] { return raw->write(offset.value_or(0), parts, opts.copy); });
        commit(d, r);
        if (faults != nullptr && offset)
            faults->committed(slot, step, *offset, src.size);
    }

    void write_new(slot_t slot, step_t step, const_parts parts)
    {
        const const_bytes src{nullptr, total_bytes(parts), memory_space::host}; // the whole snapshot
        ensure_group(slot);
        slot_entry& e = slots[static_cast<std::size_t>(slot)];
        // The new dataset may take the old one's space. So that the file never calls complete a snapshot
        // whose bytes are being overwritten, the old record first says the slot is being written.
        if (e.usable) {
            const hdf5_dataset old = open_dataset(slot, false);
            detail::write_record(old.get(), writing_record(slot, step, e.dataset_bytes, e.element), context(slot));
            flush_metadata();
        }
        // The old dataset's name is reused when it could be deleted. One a resumed file holds that is not
        // verifiably this slot's complete snapshot is never deleted (see scan).
        std::string name = e.dataset;
        if (name.empty() || !e.usable || !discard_dataset(e))
            name = detail::state_dataset_name(e.next_dataset++);
        const std::string ctx = context(slot, name);
        snapshot_record r = writing_record(slot, step, src.size, opts.element, parts);
        // Nothing reaches the file's metadata before commit(): until then a crash leaves no trace of this
        // dataset, only unreferenced bytes.
        const std::string relative = e.group + "/" + name;
        hdf5_dataset d = detail::create_slot_dataset(file.snapshots.get(), relative, r, opts.compression, ctx);
        e.dataset = name;
        e.usable = true;
        e.compressed = opts.compression != 0;
        e.element = opts.element;
        e.dataset_bytes = src.size;
        allocated += src.size;
        try {
            if (opts.compression == 0) {
                const std::optional<std::uint64_t> offset = detail::dataset_offset(d.get());
                if (offset)
                    raw->reserve(*offset, src.size);
                injected_fault(true, slot, step, offset.value_or(0), src.size);
                r.checksum = unlocked([&] { return raw->write(offset.value_or(0), parts, opts.copy); });
            } else {
                // HDF5 writes the chunks and their index with the metadata; a first flush puts them in the
                // file while the record still says "writing", so the record never declares complete a
                // snapshot whose chunk index a crash kept out of the file.
                r.checksum = write_through_hdf5(d.get(), parts, ctx);
                flush_metadata();
            }
            commit(d, r);
            if (faults != nullptr && opts.compression == 0)
                if (const std::optional<std::uint64_t> offset = detail::dataset_offset(d.get()))
                    faults->committed(slot, step, *offset, src.size);
        } catch (...) {
            // Forget the new dataset, so that no later flush publishes a dataset (or an end of file) whose
            // bytes never made it to the disk.
            d.reset();
            if (H5Ldelete(file.snapshots.get(), relative.c_str(), H5P_DEFAULT) >= 0)
                forget_dataset(e);     // usable, with dataset_bytes = src.size, since it was created above
            detail::hdf5_error_text(); // clear the stack
            throw;
        }
    }

    // Compressed snapshots go through HDF5's filters from one host buffer: device parts, or several parts,
    // are gathered into one first (compression copies anyway).
    std::uint64_t write_through_hdf5(hid_t d, const_parts parts, const std::string& ctx)
    {
        const std::size_t size = total_bytes(parts);
        std::vector<std::byte> staging;
        const std::byte* data = parts.empty() ? nullptr : parts.front().data;
        if (parts.size() != 1 || parts.front().space != memory_space::host) {
            staging.resize(size);
            std::size_t at = 0;
            for (const const_bytes& p : parts) {
                opts.copy(staging.data() + at, memory_space::host, p.data, p.space, p.size);
                at += p.size;
            }
            data = staging.data();
        }
        if (size > 0)
            check_status(H5Dwrite(d, detail::element_memory_type(opts.element), H5S_ALL, H5S_ALL, H5P_DEFAULT, data),
                         ctx + ": cannot write the compressed snapshot");
        return detail::xxh64(data, size);
    }

    // The data is in the file: declare the snapshot complete, then make both durable with one fdatasync.
    // No sync is needed between the data and the record: were the record to reach the disk before all of
    // the data (a power cut), the checksum it carries would not match and the snapshot would read as
    // damaged, never as valid; and write() has not returned, so nobody counts on it yet.
    void commit(hdf5_dataset& d, snapshot_record& r)
    {
        r.state = slot_state::complete;
        detail::write_record(d.get(), r, context(r.slot));
        flush_metadata();
        if (opts.durable_writes)
            unlocked([&] { raw->sync(); });
    }

    std::uint64_t read_through_hdf5(hid_t d, mutable_parts parts, const std::string& ctx)
    {
        const std::size_t size = total_bytes(parts);
        std::vector<std::byte> staging;
        std::byte* data = parts.empty() ? nullptr : parts.front().data;
        const bool direct = parts.size() == 1 && parts.front().space == memory_space::host;
        if (!direct) {
            staging.resize(size);
            data = staging.data();
        }
        if (size > 0 && H5Dread(d, detail::element_memory_type(opts.element), H5S_ALL, H5S_ALL, H5P_DEFAULT, data) < 0)
            detail::throw_hdf5<integrity_error>(ctx + ": cannot read the compressed snapshot");
        const std::uint64_t sum = detail::xxh64(data, size);
        if (!direct) {
            std::size_t at = 0;
            for (const mutable_bytes& p : parts) {
                opts.copy(p.data, p.space, data + at, memory_space::host, p.size);
                at += p.size;
            }
        }
        return sum;
    }

    // Resume: what the file holds, slot by slot.
    void scan()
    {
        const detail::snapshot_layout layout = detail::locate_snapshots(file.snapshots.get(), where);
        for (const auto& [slot, place] : layout.slots) {
            if (slot >= capacity.slots)
                continue; // not a slot this store may use
            slot_entry& e = entry(slot, true);
            e.group = place.group;
            e.dataset = place.dataset;
            e.next_group = place.next_group;
            e.next_dataset = place.next_dataset;
            if (!place.leftovers.empty())
                e.problem = "/" + std::string(detail::snapshots_group_name) + "/" + place.leftovers.front().first +
                            ": " + place.leftovers.front().second;
            if (e.dataset.empty())
                continue;
            const std::string ctx = "/" + std::string(detail::snapshots_group_name) + "/" + dataset_path(e);
            const hdf5_dataset d(H5Dopen2(file.snapshots.get(), dataset_path(e).c_str(), H5P_DEFAULT));
            if (!d) {
                e.problem = ctx + ": the dataset cannot be opened (" + detail::hdf5_error_text() + ")";
                continue;
            }
            const detail::record_reading rr = detail::read_record(d.get());
            if (!rr.problem.empty() || rr.record.slot != slot) { // replaced by the next write to the slot
                e.problem =
                    ctx + ": " +
                    (rr.problem.empty() ? "its record belongs to slot " + std::to_string(rr.record.slot) : rr.problem);
                continue;
            }
            if (rr.record.state != slot_state::complete) {
                // Set aside, neither rewritten in place nor deleted. The header may be stale: that of a
                // dataset deleted before the kill (its record says "writing" since write_new marks a dataset so
                // before deleting it), at an address that HDF5 gave to the new dataset whose header the kill
                // kept out of the file. The storage it names may since belong to another slot's snapshot, and
                // deleting it would free that storage a second time.
                e.problem = ctx + ": its write of x_" + std::to_string(rr.record.step) + " was interrupted";
                continue;
            }
            e.usable = true;
            e.element = rr.record.element;
            e.compressed = !detail::dataset_offset(d.get()).has_value() && rr.record.bytes > 0;
            e.dataset_bytes = rr.record.bytes;
            allocated += rr.record.bytes;
            e.step = rr.record.step;
            e.bytes = rr.record.bytes;
            assign_parts(e, rr.record);
            counts.holds(e.bytes);
        }
    }

    // The part sizes a record declares (one part: the whole snapshot).
    static void assign_parts(slot_entry& e, const snapshot_record& r)
    {
        if (r.parts.empty()) {
            e.parts.assign_single(static_cast<std::size_t>(r.bytes));
            return;
        }
        std::vector<std::size_t> sizes(r.parts.begin(), r.parts.end());
        e.parts.assign(std::span<const std::size_t>(sizes));
    }

    void close_file()
    {
        raw.reset();
        file.snapshots.reset();
        const bool ok = file.file.reset();
        open = false;
        claim = detail::file_claim();
        if (!ok)
            detail::throw_hdf5<io_error>("closing " + where + " failed");
    }
};

hdf5_store::hdf5_store(std::filesystem::path file, level_capacity capacity, options opts)
    : impl_(std::make_unique<impl>())
{
    impl& s = *impl_;
    s.path = std::move(file);
    s.where = s.path.string();
    s.capacity = capacity;
    s.opts = opts;
    detail::require_room(capacity, "hdf5_store");
    if (opts.compression < 0 || opts.compression > 9)
        throw argument_error("hdf5_store compression must be 0 (none) to 9, got " + std::to_string(opts.compression));
    if (opts.transfer_bytes < 4096)
        throw argument_error("hdf5_store transfer_bytes must be at least 4096, got " +
                             std::to_string(opts.transfer_bytes));
    if (opts.copy.target() == nullptr || opts.name == nullptr)
        throw argument_error("hdf5_store options need a copy function and a name");
    if (s.where.empty())
        throw argument_error("hdf5_store needs a file path");
    s.counts = level_accounting(opts.name);

    s.claim = detail::file_claim(s.path);
    hdf5_scope scope;
    if (opts.mode == open_mode::replace) {
        s.groups_in_advance =
            std::min<std::uint64_t>(static_cast<std::uint64_t>(capacity.slots), detail::slot_groups_in_advance);
        s.file = detail::create_snapshot_file(s.path, s.groups_in_advance, opts.run_identity);
        s.identity = opts.run_identity;
        s.claim.refresh(); // the new file, renamed over the path
    } else {
        s.file = detail::open_snapshot_file(s.path, true);
        s.identity = detail::read_run_identity(s.file.file.get());
        if (!opts.run_identity.empty() && s.identity != opts.run_identity)
            throw argument_error(
                "refusing to resume " + s.where + ": it was written by " +
                (s.identity.empty() ? std::string("a run that recorded no identity") : "\"" + s.identity + "\"") +
                ", but this run is \"" + opts.run_identity + "\"");
        s.scan();
    }
    if (const std::optional<detail::write_intent_place> found = detail::read_write_intent(s.file.file.get())) {
        s.intent_at = found->offset;
        s.keep_torn_slots(found->latest);
    }
    s.raw = std::make_unique<detail::raw_file>(s.path, opts.io, opts.transfer_bytes);
    haddr_t eoa = 0;
    check_status(H5Fget_eoa(s.file.file.get(), &eoa), "cannot query the end of " + s.where);
    s.reserved_end = eoa;
    s.open = true;
}

hdf5_store::hdf5_store(std::filesystem::path file, level_capacity capacity)
    : hdf5_store(std::move(file), capacity, options{})
{
}

hdf5_store::hdf5_store(std::filesystem::path file, slot_t slots)
    : hdf5_store(std::move(file), level_capacity{.slots = detail::require_slot_count(slots, "hdf5_store")}, options{})
{
}

hdf5_store::~hdf5_store()
{
    if (impl_ && impl_->open) {
        try {
            hdf5_scope scope;
            impl_->close_file();
        } catch (...) { // NOLINT(bugprone-empty-catch): a destructor cannot report; close() can
        }
    }
}

hdf5_store::hdf5_store(hdf5_store&&) noexcept = default;
hdf5_store& hdf5_store::operator=(hdf5_store&& other) noexcept
{
    if (this != &other) {
        hdf5_store gone(std::move(*this)); // closes the current file
        impl_ = std::move(other.impl_);
    }
    return *this;
}

level_capacity hdf5_store::capacity() const noexcept
{
    return impl_->capacity;
}

void hdf5_store::write(slot_t slot, step_t step, const_bytes src)
{
    write(slot, step, const_parts(&src, 1));
}

void hdf5_store::read(slot_t slot, step_t step, mutable_bytes dst)
{
    read(slot, step, mutable_parts(&dst, 1));
}

void hdf5_store::write(slot_t slot, step_t step, const_parts parts)
{
    const const_bytes src{nullptr, total_bytes(parts), memory_space::host}; // the whole snapshot, for its size
    impl& s = *impl_;
    s.require_open();
    const impl::slot_entry& e = s.entry(slot, true); // (write_new may grow the table: not used after it)
    detail::require_slot_takes(e.step, step, "store", [&] { return "disk slot " + std::to_string(slot); });
    const std::size_t element = element_bytes(s.opts.element);
    if (src.size % element != 0)
        throw argument_error("a snapshot of " + std::to_string(src.size) + " bytes is no whole number of " +
                             std::to_string(element) + "-byte " + std::string(to_string(s.opts.element)) +
                             " elements (hdf5_store options::element)");
    const bool in_place = !e.dataset.empty() && e.usable && !e.compressed && s.opts.compression == 0 &&
                          e.element == s.opts.element && e.dataset_bytes == src.size;
    if (!in_place) {
        const std::uint64_t after = s.allocated - (e.usable ? e.dataset_bytes : 0) + src.size;
        if (after > s.capacity.bytes)
            throw capacity_error("the disk store's " + std::to_string(s.capacity.bytes) + "-byte budget cannot hold " +
                                 "another snapshot of " + std::to_string(src.size) + " bytes (" +
                                 std::to_string(s.allocated) + " bytes in the file's slots)");
    }
    const level_accounting::wait_timer timer(s.counts);
    hdf5_scope scope;
    const impl::bind_scope bound(s, scope);
    try {
        s.announce(slot, slot + 1);
        if (in_place)
            s.write_in_place(slot, step, parts);
        else
            s.write_new(slot, step, parts);
        s.settle(slot);
    } catch (const io_error& failed) { // disk full, file size limit, I/O error: the slot is left empty
        s.after_failed_write(slot);
        throw io_error("writing x_" + std::to_string(step) + " (" + std::to_string(src.size) +
                       " bytes) into disk slot " + std::to_string(slot) + " of " + s.where +
                       " failed: " + failed.what());
    } catch (...) {
        s.after_failed_write(slot);
        throw;
    }
    impl::slot_entry& written = s.slots[static_cast<std::size_t>(slot)];
    written.problem.clear();
    written.step = step;
    written.bytes = src.size;
    written.parts.assign(parts);
    s.counts.wrote(src.size);
}

void hdf5_store::read(slot_t slot, step_t step, mutable_parts parts)
{
    const mutable_bytes dst{nullptr, total_bytes(parts), memory_space::host}; // the whole snapshot, for its size
    impl& s = *impl_;
    s.require_open();
    const impl::slot_entry& e = s.entry(slot, false);
    if (e.step < 0 && e.problem.empty()) // a slot the file found damaged is an integrity_error below
        throw schedule_error("restore of x_" + std::to_string(step) + " from disk slot " + std::to_string(slot) +
                             " of " + s.where + ", which holds no snapshot");
    if (e.step != step)
        throw integrity_error("disk slot " + std::to_string(slot) + " of " + s.where + " holds " +
                              detail::describe_snapshot(e.step) + ", not x_" + std::to_string(step) +
                              (e.problem.empty() ? "" : " (" + e.problem + ")"));
    if (const std::optional<std::string> why = detail::part_mismatch(e.parts.sizes(), parts, step))
        throw integrity_error("disk slot " + std::to_string(slot) + " of " + s.where + " holds " + *why);
    const level_accounting::wait_timer timer(s.counts);
    hdf5_scope scope;
    const impl::bind_scope bound(s, scope);
    const std::string ctx = s.context(slot);
    hdf5_dataset d = s.open_dataset(slot, true);
    const detail::record_reading rr = detail::read_record(d.get());
    if (!rr.problem.empty())
        throw integrity_error(ctx + ": " + rr.problem);
    const snapshot_record& r = rr.record;
    if (r.state != slot_state::complete)
        throw integrity_error(ctx + ": the file marks this snapshot as still being written (an interrupted write)");
    if (r.slot != slot)
        throw integrity_error(ctx + ": the record belongs to slot " + std::to_string(r.slot) + ", not slot " +
                              std::to_string(slot));
    if (r.step != step)
        throw integrity_error(ctx + ": the file holds x_" + std::to_string(r.step) + " there, not x_" +
                              std::to_string(step));
    if (r.bytes != dst.size)
        throw integrity_error(ctx + ": the file's snapshot has " + std::to_string(r.bytes) + " bytes, the state " +
                              std::to_string(dst.size));
    {
        // The file's own record of the parts, against the state's (one part when it records none).
        std::vector<std::size_t> recorded(r.parts.begin(), r.parts.end());
        if (recorded.empty())
            recorded.push_back(static_cast<std::size_t>(r.bytes));
        if (const std::optional<std::string> why = detail::part_mismatch(recorded, parts, step))
            throw integrity_error(ctx + ": the file holds " + *why);
    }
    std::uint64_t sum = 0;
    if (const std::optional<std::uint64_t> offset = detail::dataset_offset(d.get())) {
        try {
            s.injected_fault(false, slot, step, *offset, dst.size);
            sum = s.unlocked([&] { return s.raw->read(*offset, parts, s.opts.copy); });
        } catch (const integrity_error& truncated) {
            throw integrity_error(ctx + ": " + truncated.what());
        } catch (const io_error& failed) {
            throw io_error(ctx + ": " + failed.what());
        }
    } else if (r.bytes > 0) {
        sum = s.read_through_hdf5(d.get(), parts, ctx);
    } else {
        sum = detail::xxh64("", 0);
    }
    if (sum != r.checksum)
        throw integrity_error(ctx + ": checksum mismatch for x_" + std::to_string(step) + ": the data hashes to " +
                              detail::hex(sum) + " but the record says " + detail::hex(r.checksum) +
                              " (the file was damaged or altered)");
    s.counts.read(dst.size);
}

void hdf5_store::release(slot_t slot)
{
    impl& s = *impl_;
    impl::slot_entry& e = s.entry(slot, false);
    if (e.step < 0)
        throw schedule_error("free of disk slot " + std::to_string(slot) + ", which holds no snapshot");
    e.step = -1;
    s.counts.released(e.bytes);
    e.bytes = 0;
}

void hdf5_store::release_all() noexcept
{
    if (!impl_)
        return;
    for (impl::slot_entry& e : impl_->slots) {
        e.step = -1;
        e.bytes = 0;
    }
    impl_->counts.released_all();
}

std::span<const std::size_t> hdf5_store::part_sizes(slot_t slot) const
{
    if (slot < 0 || static_cast<std::size_t>(slot) >= impl_->slots.size())
        return {};
    const impl::slot_entry& e = impl_->slots[static_cast<std::size_t>(slot)];
    return e.step >= 0 ? e.parts.sizes() : std::span<const std::size_t>{};
}

std::size_t hdf5_store::snapshot_bytes(slot_t slot) const
{
    if (slot < 0 || static_cast<std::size_t>(slot) >= impl_->slots.size())
        return 0;
    const impl::slot_entry& e = impl_->slots[static_cast<std::size_t>(slot)];
    return e.step >= 0 ? static_cast<std::size_t>(e.bytes) : 0;
}

const level_stats& hdf5_store::stats() const noexcept
{
    return impl_->counts.stats();
}

void hdf5_store::restart_peaks() noexcept
{
    impl_->counts.restart_peaks();
}

void hdf5_store::wait_for_user() const
{
    impl_->opts.copy.wait_for_user();
}

step_t hdf5_store::snapshot_step(slot_t slot) const
{
    if (slot < 0 || static_cast<std::size_t>(slot) >= impl_->slots.size())
        return -1;
    return impl_->slots[static_cast<std::size_t>(slot)].step;
}

void hdf5_store::flush()
{
    impl& s = *impl_;
    s.require_open();
    const level_accounting::wait_timer timer(s.counts);
    hdf5_scope scope;
    const impl::bind_scope bound(s, scope);
    s.flush_metadata();
    s.unlocked([&] { s.raw->sync(); });
}

void hdf5_store::use_copier(byte_copier copy)
{
    detail::use_copier(impl_->opts.copy, copy, impl_->opts.name);
}

byte_copier hdf5_store::copier() const noexcept
{
    return impl_->opts.copy;
}

void hdf5_store::close()
{
    impl& s = *impl_;
    if (!s.open)
        return;
    hdf5_scope scope;
    try {
        s.flush_metadata();
        s.raw->sync();
    } catch (...) {
        s.close_file();
        throw;
    }
    s.close_file();
    release_all();
}

const std::filesystem::path& hdf5_store::path() const noexcept
{
    return impl_->path;
}

bool hdf5_store::direct_io() const noexcept
{
    return impl_ && impl_->raw && impl_->raw->direct();
}

const std::string& hdf5_store::run_identity() const noexcept
{
    return impl_->identity;
}

void detail::hdf5_store_access::set_fault_hook(hdf5_store& store, hdf5_fault_hook* hook) noexcept
{
    store.impl_->faults = hook;
}

} // namespace remat

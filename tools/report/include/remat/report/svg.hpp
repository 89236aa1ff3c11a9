// remat/report/svg.hpp — writing SVG: escaping, elements, and a document streamed to an ostream.
//
// Part of remat_report, the internal library that the tool, the trainers and the benchmarks share for
// what people look at (SVG, charts, progress, report files). Not installed; remat.hpp does not include it.
//
//     remat::report::svg_document svg(out, 400, 300);            // <svg ...> with a white background
//     svg.line(10, 10, 390, 290, {{"stroke", "black"}, {"stroke-width", 1.5}});
//     svg.text(20, 30, "x < y & \"z\"", {{"font-size", 12}});  // escaped
//     svg.finish();                                               // </svg>
#pragma once

#include <concepts>
#include <cstddef>
#include <initializer_list>
#include <iosfwd>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace remat::report {

/// `text` with &, <, >, " and ' replaced by XML entities: safe as element content and as an attribute
/// value. Bytes that XML 1.0 forbids (control characters other than tab, newline and carriage return)
/// become U+FFFD, so any input yields a well-formed document.
///
///     remat::report::xml_escape("a<b & \"c\"");   // "a&lt;b &amp; &quot;c&quot;"
[[nodiscard]] std::string xml_escape(std::string_view text);

/// A number as SVG coordinates want it: at most two decimals, no trailing zeros, no "-0". Throws
/// remat::argument_error for NaN and infinities (a bug in the caller's scaling).
///
///     remat::report::svg_number(12.500);   // "12.5"
[[nodiscard]] std::string svg_number(double value);

/// One attribute of an element: a name and a value, a number (written with svg_number) or a text
/// (escaped). Names are written as given: use literal names.
///
///     remat::report::attribute{"stroke-width", 1.5};
///     remat::report::attribute{"fill", "none"};
class attribute {
public:
    attribute(std::string_view name, double value);
    template <std::integral I>
    attribute(std::string_view name, I value) : attribute(name, static_cast<double>(value))
    {
    }
    attribute(std::string_view name, std::string_view value);
    attribute(std::string_view name, const char* value) : attribute(name, std::string_view(value)) {}
    attribute(std::string_view name, const std::string& value) : attribute(name, std::string_view(value)) {}

    [[nodiscard]] std::string_view name() const noexcept { return name_; }
    /// The value as it appears between the quotes (numbers formatted, texts escaped).
    [[nodiscard]] const std::string& written_value() const noexcept { return value_; }

private:
    std::string_view name_;
    std::string value_;
};

using attributes = std::initializer_list<attribute>;

/// A point in SVG user units (x to the right, y down).
struct point {
    double x = 0;
    double y = 0;
    friend bool operator==(const point&, const point&) = default;
};

/// An SVG document written to a stream as it is built (buffered; nothing is held beyond 64 KiB), so a
/// diagram with millions of elements needs no memory for them. Elements are written in call order, later
/// ones on top. Not thread-safe.
///
///     remat::report::svg_document svg(file, 800, 600);
///     svg.open("g", {{"font-family", "sans-serif"}});
///     svg.text(10, 20, "title", {{"font-size", 16}});
///     svg.close();
///     svg.finish();
class svg_document {
public:
    /// Writes `<svg xmlns=... width height viewBox>` and a white background rectangle.
    svg_document(std::ostream& out, double width, double height);
    /// An unfinished document (an exception left it) is flushed as it is, unterminated: the caller writes
    /// to a temporary file that is then thrown away (report::write_file_safely).
    ~svg_document();
    svg_document(const svg_document&) = delete;
    svg_document& operator=(const svg_document&) = delete;

    [[nodiscard]] double width() const noexcept { return width_; }
    [[nodiscard]] double height() const noexcept { return height_; }

    /// An empty element: `<tag a="1" b="x"/>`.
    void element(std::string_view tag, attributes attrs);
    /// `<tag ...>`, closed by the matching close().
    void open(std::string_view tag, attributes attrs = {});
    /// Closes the element the last open() started; throws std::logic_error when none is open.
    void close();
    /// `<text x y ...>content</text>` with the content escaped.
    void text(double x, double y, std::string_view content, attributes attrs = {});
    /// `<title>` of the element that is open (a tooltip in browsers), escaped.
    void title(std::string_view content);

    void line(double x1, double y1, double x2, double y2, attributes style = {});
    void circle(double cx, double cy, double r, attributes style = {});
    void rect(double x, double y, double width, double height, attributes style = {});
    /// An open polyline through `points` (nothing for fewer than one point).
    void polyline(std::span<const point> points, attributes style = {});

    /// Closes the document (`</svg>`) and flushes it. Throws std::logic_error when an open() is not closed.
    void finish();

private:
    void append_attributes(attributes attrs);
    void shape(std::string_view tag, attributes geometry, attributes style);
    void flush_if_large();
    void flush();

    std::ostream& out_;
    std::string buffer_;
    std::vector<std::string> open_tags_;
    double width_;
    double height_;
    bool finished_ = false;
};

} // namespace remat::report

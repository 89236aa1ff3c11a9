#include "remat/report/svg.hpp"

#include "remat/error.hpp"

#include <fmt/format.h>

#include <cmath>
#include <ostream>
#include <stdexcept>

namespace remat::report {
namespace {

constexpr std::size_t flush_threshold = std::size_t{1} << 16;

} // namespace

std::string xml_escape(std::string_view text)
{
    std::string escaped;
    escaped.reserve(text.size());
    for (const char c : text) {
        switch (c) {
        case '&':
            escaped += "&amp;";
            break;
        case '<':
            escaped += "&lt;";
            break;
        case '>':
            escaped += "&gt;";
            break;
        case '"':
            escaped += "&quot;";
            break;
        case '\'':
            escaped += "&apos;";
            break;
        default:
            if (static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n' && c != '\r')
                escaped += "\xEF\xBF\xBD"; // U+FFFD: XML 1.0 has no way to write these
            else
                escaped += c;
        }
    }
    return escaped;
}

std::string svg_number(double value)
{
    if (!std::isfinite(value))
        throw argument_error(fmt::format("an SVG number must be finite, got {}", value));
    std::string text = fmt::format("{:.2f}", value);
    while (text.back() == '0')
        text.pop_back();
    if (text.back() == '.')
        text.pop_back();
    if (text == "-0")
        text = "0";
    return text;
}

attribute::attribute(std::string_view name, double value) : name_(name), value_(svg_number(value)) {}

attribute::attribute(std::string_view name, std::string_view value) : name_(name), value_(xml_escape(value)) {}

svg_document::svg_document(std::ostream& out, double width, double height) : out_(out), width_(width), height_(height)
{
    buffer_ += fmt::format(R"(<svg xmlns="http://www.w3.org/2000/svg" width="{0}" height="{1}" viewBox="0 0 {0} {1}">)"
                           "\n",
                           svg_number(width), svg_number(height));
    rect(0, 0, width, height, {{"fill", "white"}});
}

svg_document::~svg_document()
{
    if (!finished_) {
        try {
            flush();
        } catch (...) { // NOLINT(bugprone-empty-catch): a destructor during unwinding must not throw
        }
    }
}

void svg_document::append_attributes(attributes attrs)
{
    for (const attribute& a : attrs) {
        buffer_ += ' ';
        buffer_ += a.name();
        buffer_ += "=\"";
        buffer_ += a.written_value();
        buffer_ += '"';
    }
}

void svg_document::shape(std::string_view tag, attributes geometry, attributes style)
{
    buffer_ += '<';
    buffer_ += tag;
    append_attributes(geometry);
    append_attributes(style);
    buffer_ += "/>\n";
    flush_if_large();
}

void svg_document::element(std::string_view tag, attributes attrs)
{
    shape(tag, attrs, {});
}

void svg_document::open(std::string_view tag, attributes attrs)
{
    buffer_ += '<';
    buffer_ += tag;
    append_attributes(attrs);
    buffer_ += ">\n";
    open_tags_.emplace_back(tag);
}

void svg_document::close()
{
    if (open_tags_.empty())
        throw std::logic_error("svg_document::close without an open element");
    buffer_ += "</" + open_tags_.back() + ">\n";
    open_tags_.pop_back();
    flush_if_large();
}

void svg_document::text(double x, double y, std::string_view content, attributes attrs)
{
    buffer_ += "<text";
    append_attributes({{"x", x}, {"y", y}});
    append_attributes(attrs);
    buffer_ += '>';
    buffer_ += xml_escape(content);
    buffer_ += "</text>\n";
    flush_if_large();
}

void svg_document::title(std::string_view content)
{
    buffer_ += "<title>" + xml_escape(content) + "</title>\n";
}

void svg_document::line(double x1, double y1, double x2, double y2, attributes style)
{
    shape("line", {{"x1", x1}, {"y1", y1}, {"x2", x2}, {"y2", y2}}, style);
}

void svg_document::circle(double cx, double cy, double r, attributes style)
{
    shape("circle", {{"cx", cx}, {"cy", cy}, {"r", r}}, style);
}

void svg_document::rect(double x, double y, double width, double height, attributes style)
{
    shape("rect", {{"x", x}, {"y", y}, {"width", width}, {"height", height}}, style);
}

void svg_document::polyline(std::span<const point> points, attributes style)
{
    if (points.empty())
        return;
    std::string list;
    for (const point& p : points) {
        if (!list.empty())
            list += ' ';
        list += svg_number(p.x) + "," + svg_number(p.y);
    }
    shape("polyline", {{"points", list}, {"fill", "none"}}, style);
}

void svg_document::finish()
{
    if (!open_tags_.empty())
        throw std::logic_error("svg_document::finish with <" + open_tags_.back() + "> still open");
    buffer_ += "</svg>\n";
    flush();
    finished_ = true;
}

void svg_document::flush_if_large()
{
    if (buffer_.size() >= flush_threshold)
        flush();
}

void svg_document::flush()
{
    out_.write(buffer_.data(), static_cast<std::streamsize>(buffer_.size()));
    buffer_.clear();
}

} // namespace remat::report

#include <gate/render/rank_output.hpp>

#include <algorithm>
#include <cmath>

#include <gate/render/escape.hpp>
#include <gate/util/format.hpp>

namespace gate::render {

namespace {

constexpr double k_width = 720, k_height = 420;
constexpr double k_left = 72, k_right = 24, k_top = 44, k_bottom = 56;
constexpr std::size_t k_svg_label_bytes = 40;

// A round tick step giving about five intervals over `span`.
double tick_step(double span) {
  if (!(span > 0)) return 1;
  const double raw = span / 5;
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0})
    if (m * magnitude >= raw) return m * magnitude;
  return 10 * magnitude;
}

struct Axis {
  double low = 0, high = 1, step = 1;
  double pixel_low = 0, pixel_high = 1; // where low and high land
  double at(double v) const { return pixel_low + (v - low) / (high - low) * (pixel_high - pixel_low); }
};

Axis axis(double low, double high, double pixel_low, double pixel_high) {
  if (!(high > low)) {
    low -= 1;
    high += 1;
  }
  Axis a;
  a.step = tick_step(high - low);
  a.low = std::floor(low / a.step) * a.step;
  a.high = std::ceil(high / a.step) * a.step;
  a.pixel_low = pixel_low;
  a.pixel_high = pixel_high;
  return a;
}

std::string px(double v) { return fixed(v, 1); }

std::string line(double x1, double y1, double x2, double y2, const char* cls) {
  return "<line class=\"" + std::string(cls) + "\" x1=\"" + px(x1) + "\" y1=\"" + px(y1) + "\" x2=\"" +
         px(x2) + "\" y2=\"" + px(y2) + "\"/>";
}

std::string text(double x, double y, const char* anchor, const std::string& escaped) {
  return "<text x=\"" + px(x) + "\" y=\"" + px(y) + "\" text-anchor=\"" + anchor + "\">" + escaped +
         "</text>";
}

} // namespace

std::string rank_svg(const rank::Ranking& r) {
  double t_max = 0, e_low = rank::k_anchor_elo, e_high = rank::k_anchor_elo;
  for (const auto& s : r.strategies) {
    t_max = std::max(t_max, s.tokens_per_task);
    e_low = std::min({e_low, s.elo, s.elo_interval.low});
    e_high = std::max({e_high, s.elo, s.elo_interval.high});
  }
  const Axis x = axis(0, t_max * 1.05, k_left, k_width - k_right);
  // A margin above and below, so no point sits on the frame.
  const double pad = (e_high - e_low) * 0.05;
  const Axis y = axis(e_low - pad, e_high + pad, k_height - k_bottom, k_top);
  const std::string size = fixed(k_width, 0) + "\" height=\"" + fixed(k_height, 0);
  std::string out =
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + size + "\" viewBox=\"0 0 " + fixed(k_width, 0) +
      " " + fixed(k_height, 0) +
      "\" role=\"img\" aria-label=\"Elo against tokens per task\">\n<title>Elo against tokens per "
      "task: " +
      xml_escape(r.suite_name + " " + r.suite_version) + "</title>\n";
  out += "<style>text{font:12px system-ui,sans-serif;fill:#222}.grid{stroke:#ddd}.axis{stroke:#444}"
         ".anchor{stroke:#888;stroke-dasharray:4 3}.bar{stroke:#1f5fa8;stroke-width:2}.path{fill:none;"
         "stroke:#1f5fa8;stroke-opacity:.45;stroke-width:1.5}circle{fill:#1f5fa8}</style>\n";
  out += "<rect width=\"100%\" height=\"100%\" fill=\"#fff\"/>\n";
  out += text(k_width / 2, 22, "middle",
              "Elo (95% bootstrap interval) against tokens per task — anchor " + xml_escape(r.anchor) +
                  " = 1000") +
         "\n";
  for (double v = y.low; v <= y.high + y.step / 2; v += y.step)
    out += line(k_left, y.at(v), k_width - k_right, y.at(v), "grid") +
           text(k_left - 6, y.at(v) + 4, "end", fixed(v, 0)) + "\n";
  for (double v = x.low; v <= x.high + x.step / 2; v += x.step)
    out += line(x.at(v), k_height - k_bottom, x.at(v), k_height - k_bottom + 5, "axis") +
           text(x.at(v), k_height - k_bottom + 18, "middle", fixed(v, 0)) + "\n";
  out += line(k_left, k_height - k_bottom, k_width - k_right, k_height - k_bottom, "axis") +
         line(k_left, k_top, k_left, k_height - k_bottom, "axis") + "\n";
  out += line(k_left, y.at(rank::k_anchor_elo), k_width - k_right, y.at(rank::k_anchor_elo), "anchor") + "\n";
  out += text((k_left + k_width - k_right) / 2, k_height - 14, "middle", "tokens per task (whole chain)") +
         "<text x=\"16\" y=\"" + px((k_top + k_height - k_bottom) / 2) +
         "\" text-anchor=\"middle\" transform=\"rotate(-90 16 " + px((k_top + k_height - k_bottom) / 2) +
         ")\">Elo</text>\n";
  std::string points;
  for (const auto& s : r.strategies)
    points += (points.empty() ? "" : " ") + px(x.at(s.tokens_per_task)) + "," + px(y.at(s.elo));
  out += "<polyline class=\"path\" points=\"" + points + "\"/>\n";
  for (const auto& s : r.strategies) {
    const double cx = x.at(s.tokens_per_task), cy = y.at(s.elo);
    const double lo = y.at(s.elo_interval.low), hi = y.at(s.elo_interval.high);
    out += "<g><title>" + xml_escape(s.name) + ": Elo " + fixed(s.elo, 0) + " (" +
           fixed(s.elo_interval.low, 0) + " to " + fixed(s.elo_interval.high, 0) + "), " +
           fixed(s.tokens_per_task, 0) + " tokens per task</title>" + line(cx, lo, cx, hi, "bar") +
           line(cx - 5, lo, cx + 5, lo, "bar") + line(cx - 5, hi, cx + 5, hi, "bar") + "<circle cx=\"" +
           px(cx) + "\" cy=\"" + px(cy) + "\" r=\"4\"/>" +
           text(cx + 8, cy - 6, "start", xml_escape(truncate_utf8(s.name, k_svg_label_bytes))) + "</g>\n";
  }
  return out + "</svg>\n";
}

} // namespace gate::render

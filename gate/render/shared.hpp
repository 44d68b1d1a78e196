#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>

#include <gate/compare/compare.hpp>

// What several of gate's documents print the same way: one definition each,
// so the Markdown verdict, the report summary, the ranking and the HTML page
// cannot drift apart (and the module builds as one translation unit).
namespace gate::render {

// A rate in [0, 1] as a percentage with one decimal, "78.0%"; "—" when not finite.
std::string pct(double rate);

// A p or q value with three decimals, "0.012"; "<0.001" below that, with
// `lt` written for "<" ("&lt;" in Markdown and HTML, "<" in XML text that
// is escaped later); "—" when not finite.
std::string p_value(double p, std::string_view lt = "&lt;");

// US dollars: "$12.35" from 1 up, else up to six decimals without trailing
// zeros ("$0.0042", "$0"); "<$0.000001" for less, "—" when not finite.
std::string usd_text(double usd);

// "1 run", "3 runs".
std::string plural(std::int64_t n, const char* one, const char* many);

// One Markdown table row from already escaped cells: "| a | b |\n".
std::string md_row(std::initializer_list<std::string> cells);

// What a confirmation that ran decided, as plain text to be escaped:
// "Confirmed", "Dismissed as noise", "Incomplete: 2 of 18 fresh runs
// errored (HTTP 500 …)" or "Could not measure: …". Never "dismissed" for a
// confirmation whose runs errored.
std::string confirmation_outcome(const compare::Confirmation& c);

// How a number's unit follows it in plain text: "12.5%", "12.5 pp".
std::string unit_suffix(const std::string& unit);

// Byte limits of untrusted text, each cut on a UTF-8 boundary.
inline constexpr std::size_t k_md_id_bytes = 120;         // a task id or scenario in a Markdown table
inline constexpr std::size_t k_md_excerpt_bytes = 120;    // an answer or question excerpt in Markdown
inline constexpr std::size_t k_junit_excerpt_bytes = 200; // an answer or question excerpt in JUnit XML

} // namespace gate::render

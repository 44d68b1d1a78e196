#include <bench/data.hpp>

#include <array>
#include <boost/json/object.hpp>
#include <cstdio>

#include <gate/util/json.hpp>

namespace gate::bench {

namespace {

constexpr std::array<const char*, 12> k_products = {
    "Ridge Parka", "Trail Mug", "Camp Lantern", "Wool Socks",    "Summit Backpack", "Rain Shell",
    "Trek Poles",  "Down Vest", "Hiking Boots", "Fleece Hoodie", "Sleeping Bag",    "Headlamp"};
constexpr std::array<const char*, 10> k_names = {"Priya", "Marco", "Aiko",  "Jonas", "Fatima",
                                                 "Liam",  "Chen",  "Sofia", "Omar",  "Elena"};
constexpr std::array<const char*, 8> k_vendors = {"Acme Corp",   "Lumen Labs",     "Northwind Traders",
                                                  "Globex",      "Initech",        "Umbrella Supply",
                                                  "Stark Parts", "Wayne Logistics"};
constexpr std::array<const char*, 6> k_labels = {"billing", "shipping", "returns",
                                                 "product", "account",  "other"};
constexpr std::array<const char*, 3> k_difficulties = {"easy", "medium", "hard"};

constexpr const char* k_support_system =
    "You are the support assistant for Northwind Outfitters. Answer in at most three sentences. Policy: "
    "returns within 30 days with receipt; refunds go to the original payment method within 5-7 business "
    "days; shipping is free over $50; international orders ship in 10-14 days; warranty on backpacks is 2 "
    "years.";
constexpr const char* k_extraction_system =
    "Extract the requested fields and answer with JSON only, no prose.";
constexpr const char* k_arithmetic_system = "Solve the problem. End with 'Answer: <number>'.";
constexpr const char* k_classification_system =
    "Classify the message. Reply with exactly one label from: billing, shipping, returns, product, account, "
    "other.";

// Picks from a list by a hash.
template <std::size_t N> const char* pick(const std::array<const char*, N>& list, std::uint64_t h) {
  return list[h % N];
}

boost::json::object check(std::string_view type, std::string_view key, std::string_view value) {
  return boost::json::object{{"type", type}, {key, value}};
}

// "1,482.50" for 148250 cents; "1,482" when `cents` is false.
std::string money(std::int64_t cents, bool with_cents = true) {
  const std::string digits = std::to_string(cents / 100);
  std::string out;
  // Appending rather than string::insert: g++ 12 raises a false -Wrestrict
  // on insert of a literal.
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i != 0 && (digits.size() - i) % 3 == 0) out.push_back(',');
    out.push_back(digits[i]);
  }
  if (!with_cents) return out;
  char frac[4];
  std::snprintf(frac, sizeof frac, "%02lld", static_cast<long long>(cents % 100));
  return out + "." + frac;
}

// A price as a model writes it: "28.05", or "60" when whole.
std::string plain_amount(std::int64_t cents) {
  if (cents % 100 == 0) return std::to_string(cents / 100);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%lld.%02lld", static_cast<long long>(cents / 100),
                static_cast<long long>(cents % 100));
  return buf;
}

void support(TaskText& t, std::uint64_t h, const std::string& ref) {
  const std::string product = pick(k_products, h >> 8);
  const std::string name = pick(k_names, h >> 16);
  switch ((h >> 24) % 3) {
  case 0:
    t.input = "Ticket #" + ref + ": " + name + " asks: how long do I have to return the " + product +
              " I bought on " + std::to_string(1 + (h >> 32) % 28) + " March?";
    t.checks = {check("contains", "value", "30 days"),
                check("regex", "pattern", "(?i)\\b(receipt|proof of purchase)\\b"),
                boost::json::object{{"type", "number"}, {"value", 30}, {"tolerance", 0}}};
    t.good = "You can return the " + product + " within 30 days of purchase as long as you have the receipt.";
    t.good_alt =
        "Returns are accepted within 30 days with a receipt, so the " + product + " still qualifies.";
    t.bad = "You have 60 days to return the " + product + ", no questions asked.";
    break;
  case 1:
    t.input = "Ticket #" + ref + ": " + name + " asks: when will I see my refund for the " + product +
              " after you receive it?";
    t.checks = {check("regex", "pattern", "5\\s*(-|to)\\s*7 business days"),
                check("contains", "value", "original payment method")};
    t.good = "Once we receive the " + product +
             ", the refund goes back to your original payment method within 5-7 business days.";
    t.good_alt = "Refunds are issued to the original payment method within 5 to 7 business days of receiving "
                 "the return.";
    t.bad = "Refunds for the " + product + " are issued as store credit within 30 days.";
    break;
  default: {
    const std::int64_t dollars = 51 + static_cast<std::int64_t>((h >> 32) % 250);
    t.input = "Ticket #" + ref + ": " + name + " asks: do I pay for shipping on a $" +
              std::to_string(dollars) + " order of the " + product + "?";
    boost::json::object threshold{{"type", "number"}, {"value", 50}, {"tolerance", 0}};
    t.checks = {check("contains", "value", "free"), threshold};
    t.good = "Orders over $50 ship free, so your $" + std::to_string(dollars) + " order ships free.";
    t.good_alt = "No: shipping is free on orders over $50, and yours is $" + std::to_string(dollars) + ".";
    t.bad = "Shipping costs $7.95 on orders under $100, so you pay for this one.";
  }
  }
}

void extraction(TaskText& t, std::uint64_t h, const std::string& ref) {
  const std::string invoice = "INV-" + ref;
  const std::string vendor = pick(k_vendors, h >> 24);
  const std::int64_t cents = 1000 + static_cast<std::int64_t>((h >> 32) % 500000);
  const double total = static_cast<double>(cents) / 100.0;
  char date[16];
  std::snprintf(date, sizeof date, "2026-%02d-%02d", static_cast<int>(1 + (h >> 40) % 12),
                static_cast<int>(1 + (h >> 48) % 28));
  t.input = "Invoice " + invoice + " from " + vendor + " dated " + date + ", total due $" + money(cents) +
            ". Return {\"invoice\", \"vendor\", \"total\"}.";
  boost::json::array paths{boost::json::object{{"path", "/invoice"}, {"equals", invoice}},
                           boost::json::object{{"path", "/vendor"}, {"equals", vendor}},
                           boost::json::object{{"path", "/total"},
                                               {"min", static_cast<double>(cents - 1) / 100.0},
                                               {"max", static_cast<double>(cents + 1) / 100.0}}};
  t.checks = {boost::json::object{{"type", "json"}, {"paths", std::move(paths)}},
              check("contains", "value", "INV-"), check("regex", "pattern", "\"total\"\\s*:\\s*[0-9]")};
  std::string amount;
  json::append_number(total, amount);
  std::string wrong;
  json::append_number(total + 9, wrong);
  t.good = "{\"invoice\":\"" + invoice + "\",\"vendor\":\"" + vendor + "\",\"total\":" + amount + "}";
  t.good_alt = "{\n  \"invoice\": \"" + invoice + "\",\n  \"vendor\": \"" + vendor +
               "\",\n  \"total\": " + amount + "\n}";
  t.bad = "{\"invoice\":\"" + invoice + "\",\"vendor\":\"" + vendor + "\",\"total\":" + wrong + "}";
}

void arithmetic(TaskText& t, std::uint64_t h, const std::string& ref) {
  boost::json::object answer_format{{"type", "regex"}, {"pattern", "Answer: -?[0-9]"}};
  if ((h >> 8) % 2 == 0) {
    const std::int64_t a = 100 + static_cast<std::int64_t>((h >> 16) % 9900);
    const std::int64_t b = 100 + static_cast<std::int64_t>((h >> 32) % 9900);
    const std::int64_t sum = a + b;
    t.input = "Order #" + ref + " has two items at $" + money(a * 100, false) + " and $" +
              money(b * 100, false) + ". What is the total in dollars?";
    t.checks = {answer_format, boost::json::object{{"type", "number"}, {"value", sum}, {"tolerance", 0}},
                check("contains", "value", "Answer: ")};
    t.good = "The total is " + money(sum * 100, false) + ".\nAnswer: " + std::to_string(sum);
    t.good_alt = "Adding them gives " + std::to_string(sum) + ".\n\nAnswer: " + std::to_string(sum);
    t.bad = "The total is " + money((sum + 10) * 100, false) + ".\nAnswer: " + std::to_string(sum + 10);
    return;
  }
  static constexpr std::array<std::int64_t, 7> k_off = {10, 15, 20, 25, 30, 40, 50};
  const std::int64_t price = 20 + static_cast<std::int64_t>((h >> 16) % 380);
  const std::int64_t off = k_off[(h >> 32) % k_off.size()];
  const std::int64_t sale_cents = price * (100 - off); // price·(100−off)/100 dollars, in cents
  // The classic slip: adding the percentage instead of taking it off; it can
  // never equal the sale price, as off > 0.
  const std::int64_t marked_up_cents = price * (100 + off);
  t.input = "Order #" + ref + ": a $" + std::to_string(price) + " " + pick(k_products, h >> 40) + " is " +
            std::to_string(off) + "% off. What is the sale price in dollars?";
  t.checks = {answer_format, boost::json::object{{"type", "number"},
                                                 {"value", static_cast<double>(sale_cents) / 100.0},
                                                 {"tolerance", 0.01}}};
  t.good = "The sale price is $" + plain_amount(sale_cents) + ".\nAnswer: " + plain_amount(sale_cents);
  t.good_alt = "Sale price: $" + plain_amount(sale_cents) + " after the " + std::to_string(off) +
               "% discount.\n\nAnswer: " + plain_amount(sale_cents);
  t.bad =
      "The sale price is $" + plain_amount(marked_up_cents) + ".\nAnswer: " + plain_amount(marked_up_cents);
}

void classification(TaskText& t, std::uint64_t h, const std::string& ref) {
  const std::size_t label = (h >> 8) % k_labels.size();
  const std::string product = pick(k_products, h >> 16);
  const std::string n = std::to_string(100000 + (h >> 24) % 900000);
  static const std::array<std::string, 6> k_messages = {"I was charged twice for order #",
                                                        "Where is my package? Tracking ",
                                                        "How do I send back the ",
                                                        "Does this run small? I'm usually a medium: ",
                                                        "I can't log in; the reset email never arrives for ",
                                                        "Do you have a store in Lisbon? Asking about "};
  t.input = "Ticket #" + ref + " from " + std::string(pick(k_names, h >> 48)) + ": \"" + k_messages[label] +
            (label == 0 || label == 1 || label == 4 ? n : product) + "\"";
  t.checks = {check("contains", "value", k_labels[label]),
              check("regex", "pattern", "^(billing|shipping|returns|product|account|other)\\s*$")};
  t.good = k_labels[label];
  t.good_alt = std::string(k_labels[label]) + "\n";
  t.bad = k_labels[(label + 1) % k_labels.size()];
}

// The behaviour of a task in a world: its hash and its pass share.
struct Behaviour {
  std::uint64_t h;
  std::uint64_t pass_cut; // of 1000: always-pass tasks
};

Behaviour behaviour(std::size_t i, int world) {
  Behaviour b{mix(2 * i + 1), 800};
  // The current model answers 4% of tasks differently, and worse on them.
  if (world != 0 && mix(i ^ 0xd21f7) % 1000 < 40) b = {mix(b.h ^ 0x77), 700};
  return b;
}

} // namespace

std::uint64_t mix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

TaskText make_task(std::size_t i) {
  static constexpr std::array<const char*, 4> k_scenarios = {"support", "extraction", "arithmetic",
                                                             "classification"};
  TaskText t;
  const std::uint64_t h = mix(i);
  // A reference number unique to the task (ticket, order, invoice), so that
  // no two tasks send the same request and share a cache entry.
  const std::string ref = std::to_string(100000 + i);
  t.scenario = k_scenarios[i % 4];
  char id[48];
  std::snprintf(id, sizeof id, "%s-%06zu", t.scenario.c_str(), i);
  t.id = id;
  t.difficulty = pick(k_difficulties, mix(i ^ 0x5));
  switch (i % 4) {
  case 0:
    t.system = k_support_system;
    t.group = "support-g" + std::to_string(i / 32);
    support(t, h, ref);
    break;
  case 1:
    t.system = k_extraction_system;
    extraction(t, h, ref);
    break;
  case 2:
    t.system = k_arithmetic_system;
    arithmetic(t, h, ref);
    break;
  default: t.system = k_classification_system; classification(t, h, ref);
  }
  return t;
}

std::string case_line(const TaskText& t) {
  boost::json::object o{{"id", t.id}, {"scenario", t.scenario}, {"difficulty", t.difficulty}};
  if (!t.group.empty()) o["group"] = t.group;
  o["system"] = t.system;
  o["input"] = t.input;
  o["checks"] = t.checks;
  o["tags"] = boost::json::array{"bench", t.scenario};
  // Canonical form writes numbers as people do (3644.35, not 3.64435E3).
  return json::canonical(o);
}

bool replica_passes(std::size_t i, int replica, int world) {
  const Behaviour b = behaviour(i, world);
  const std::uint64_t u = b.h % 1000;
  if (u < b.pass_cut) return true;
  if (u < b.pass_cut + 80) return false;
  if (replica < 2) return replica == 0;
  return (mix(b.h + static_cast<std::uint64_t>(replica)) & 1) != 0;
}

std::string answer_for(const TaskText& t, std::size_t i, int replica, int world) {
  if (!replica_passes(i, replica, world)) return t.bad;
  // One task in five words its right answer differently from run to run.
  const std::uint64_t h = behaviour(i, world).h;
  if (mix(h ^ 0xa) % 5 == 0 && mix(h + 31 * static_cast<std::uint64_t>(replica)) % 2 == 0) return t.good_alt;
  return t.good;
}

std::int64_t prompt_tokens(const TaskText& t) {
  return 12 + static_cast<std::int64_t>((t.system.size() + t.input.size() + 3) / 4);
}

std::int64_t completion_tokens(std::string_view answer) {
  return 1 + static_cast<std::int64_t>((answer.size() + 3) / 4);
}

std::string chat_completion(std::string_view response_id, std::string_view model, std::string_view content,
                            std::int64_t prompt, std::int64_t completion) {
  std::string out = "{\"id\":";
  json::append_quoted(response_id, out);
  out += ",\"object\":\"chat.completion\",\"created\":1764400000,\"model\":";
  json::append_quoted(model, out);
  out += ",\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":";
  json::append_quoted(content, out);
  out += "},\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":" + std::to_string(prompt) +
         ",\"completion_tokens\":" + std::to_string(completion) +
         ",\"total_tokens\":" + std::to_string(prompt + completion) + "}}";
  return out;
}

} // namespace gate::bench

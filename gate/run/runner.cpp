#include <gate/run/runner.hpp>

#include <algorithm>
#include <boost/json/parse.hpp>
#include <mutex>
#include <stdexcept>
#include <thread>

#include <gate/agent/agent.hpp>
#include <gate/cache/store.hpp>
#include <gate/check/check.hpp>
#include <gate/check/judge.hpp>
#include <gate/model/api.hpp>
#include <gate/net/http_client.hpp>
#include <gate/prompt/apply.hpp>
#include <gate/replay/policy.hpp>
#include <gate/report/report.hpp>
#include <gate/run/request.hpp>
#include <gate/run/script.hpp>
#include <gate/util/json.hpp>
#include <gate/util/parallel.hpp>
#include <gate/util/redact.hpp>
#include <gate/util/sha256.hpp>
#include <gate/util/text.hpp>
#include <gate/util/version.hpp>

namespace gate::run {

namespace {

std::string number_text(const std::optional<double>& v) {
  if (!v) return "unset";
  std::string out;
  json::append_number(*v, out);
  return out;
}

std::string number_text(const std::optional<std::int64_t>& v) { return v ? std::to_string(*v) : "unset"; }

std::string route_json(const results::Route& r) {
  boost::json::object o;
  for (const auto& [k, v] : r)
    o[k] = v;
  return json::canonical(o);
}

// Every entry recorded through one route carries the same text: parse it
// once per thread, not once per run.
results::Route route_from_json(const std::string& text) {
  thread_local std::string last_text;
  thread_local results::Route last_route;
  if (!last_text.empty() && text == last_text) return last_route;
  results::Route r;
  boost::system::error_code ec;
  boost::json::value v = boost::json::parse(text, ec);
  if (ec || !v.is_object()) return r;
  for (const auto& kv : v.get_object())
    if (kv.value().is_string()) r[std::string(kv.key())] = std::string(kv.value().get_string());
  last_text = text;
  last_route = r;
  return r;
}

// Shared state of one execute(): guarded where workers meet.
struct Shared {
  const Inputs& in;
  const Progress& progress;
  std::vector<PreparedRequest> prepared{};
  results::Route route{};
  std::string route_text{};
  std::atomic<std::size_t> next{0};
  std::atomic<bool> abort{false};
  std::mutex mutex{}; // guards the vectors below and `outcome` fields
  Outcome* outcome = nullptr;
  int workers = 1;
  std::once_flag workers_told{}; // the client learns the worker count once
  agent::Tap* tap = nullptr;     // set when a selected case is an agent case
  metrics::Pricing pricing{};    // gate.yaml's, for the cost check
  ScriptSetup scripts{};         // where script checks run

  // The one client of the whole execute(): model tasks and the agents'
  // proxied calls share its retries and rate limiter. May throw Error.
  model::ModelClient& client() {
    model::ModelClient& c = in.client();
    std::call_once(workers_told, [&] { c.expect_workers(workers); });
    return c;
  }
};

bool fatal_bucket(model::Bucket b) {
  return b == model::Bucket::auth || b == model::Bucket::not_found || b == model::Bucket::connection ||
         b == model::Bucket::quota;
}

// What the person at the terminal can do about a fatal bucket.
std::string remedy(model::Bucket b) {
  if (b == model::Bucket::quota)
    return "; the account's quota or credit is spent: add credit or raise its spend limit, then rerun "
           "(answers recorded so far stay in the cache)";
  return "";
}

void set_fatal(Shared& sh, Exit code, const std::string& message) {
  std::lock_guard lock(sh.mutex);
  if (sh.outcome->fatal.empty()) {
    sh.outcome->fatal = redact(message);
    sh.outcome->fatal_code = code;
  }
  sh.abort = true;
}

// Lists a hit the trusted cache does not vouch for (replay::trust_of).
void note_trust(Shared& sh, const replay::Decision& hit, const std::string& key, const std::string& task_id,
                int replica) {
  const replay::Trust trust = replay::vouch(*sh.in.trusted, *sh.in.store, key, hit);
  if (trust == replay::Trust::same) return;
  std::lock_guard lock(sh.mutex);
  (trust == replay::Trust::absent ? sh.outcome->untrusted : sh.outcome->tampered)
      .push_back({task_id, replica, key, hit.remote});
}

// A response for one prepared request: from the cache, or fresh (then
// recorded when it is an answer). `what` names the call in messages.
struct Obtained {
  bool hit = false;
  bool missed = false;    // replay-only and not in the cache: listed as a miss
  bool no_client = false; // the client could not be made: the run is aborted
  model::ApiResponse response;
  model::Reply reply;
  int attempts = 1;
  std::string route_text; // the entry's route, for a hit
};

Obtained obtain(Shared& sh, const PreparedRequest& p, int replica, const std::string& task_id,
                const std::string& what) {
  const auto& cfg = *sh.in.config;
  const config::CacheMode mode = cfg.cache.mode;
  const std::string key = cache::make_key(p.call.provider, p.call.path, p.hashed_body, replica);
  Obtained o;
  replay::Decision d = replay::look_up(sh.in.store, mode, key);
  if (!d.warning.empty()) {
    std::lock_guard lock(sh.mutex);
    sh.outcome->warnings.push_back(std::move(d.warning));
  }
  if (d.verdict == replay::Verdict::hit) {
    if (sh.in.trusted != nullptr) note_trust(sh, d, key, task_id, replica);
    o.hit = true;
    o.response.status = d.entry->status;
    o.response.headers = d.entry->headers;
    o.response.body = std::move(d.entry->body);
    o.response.latency_ms = d.entry->latency_ms;
    o.route_text = std::move(d.entry->route);
  } else if (d.verdict == replay::Verdict::miss) {
    std::lock_guard lock(sh.mutex);
    sh.outcome->misses.push_back({task_id, replica, key, ""});
    o.missed = true;
    return o;
  } else {
    model::ModelClient* client = nullptr;
    try {
      client = &sh.client();
    } catch (const Error& e) {
      set_fatal(sh, e.code(), e.what());
      o.no_client = true;
      return o;
    }
    o.response = client->send(p.call, o.attempts);
  }
  o.reply = model::parse_response(p.call.provider, o.response);
  if (!o.hit && fatal_bucket(o.reply.bucket)) {
    set_fatal(sh, Exit::cannot_run,
              "upstream " + model::to_string(o.reply.bucket) + " error for " + what + ": " + o.reply.error +
                  (cfg.model.api_key_env.empty() ? std::string(" (no key sent: model.api_key_env is null)")
                                                 : " (key alias " + cfg.model.key_alias + ", key from $" +
                                                       cfg.model.api_key_env + ")") +
                  remedy(o.reply.bucket));
  }
  if (!o.hit && replay::records(sh.in.store, mode, o.reply.bucket == model::Bucket::none)) {
    replay::Fresh f;
    f.key = key;
    f.provider = p.call.provider;
    f.path = p.call.path;
    f.replica = replica;
    f.request = p.hashed_body;
    f.response = &o.response;
    f.usage = o.reply.usage;
    f.latency_ms = o.response.latency_ms;
    f.route = sh.route_text;
    try {
      replay::record(*sh.in.store, f);
    } catch (const Error& err) {
      set_fatal(sh, err.code(), err.what());
    }
  }
  return o;
}

// Tokens of a call over its whole chain (METRICS.md "Errors and tokens"):
// the reply's, plus those of the attempts retried before it.
std::pair<std::int64_t, std::int64_t> chain_tokens(const Obtained& o) {
  std::pair<std::int64_t, std::int64_t> t{0, 0};
  if (o.reply.usage) t = {o.reply.usage->prompt_tokens, o.reply.usage->completion_tokens};
  const auto& log = o.response.attempt_log;
  for (std::size_t i = 0; i + 1 < log.size(); ++i)
    if (log[i].usage) {
      t.first += log[i].usage->prompt_tokens;
      t.second += log[i].usage->completion_tokens;
    }
  return t;
}

// The fresh call's attempts into the run.
void record_attempts(const model::ApiResponse& response, results::Run& run) {
  run.ttft_ms = response.ttft_ms.value_or(0.0);
  for (const auto& a : response.attempt_log) {
    results::Attempt out{a.status, a.bucket, a.wait_ms, a.latency_ms, 0, 0, a.usage.has_value()};
    if (a.usage) {
      out.prompt_tokens = a.usage->prompt_tokens;
      out.completion_tokens = a.usage->completion_tokens;
    }
    run.attempt_log.push_back(std::move(out));
  }
}

// An llm_judge check: the judge's call through the same cache and client,
// its verdict read from the fixed JSON shape. Judge tokens join the run's
// (the whole chain) and are also kept apart.
check::Result judge(Shared& sh, const suite::Case& c, const check::Check& chk, int replica,
                    const std::string& answer, results::Run& run) {
  check::Result r;
  r.label = chk.label;
  PreparedRequest p = prepare_judge(c, *sh.in.config, chk.values.front(), answer);
  Obtained o = obtain(sh, p, replica, c.id, "the judge of task " + c.id);
  if (o.missed || o.no_client) {
    r.errored = true;
    r.detail = o.missed ? "the judge's call is not in the cache" : "no client for the judge's call";
    return r;
  }
  ++run.judge_calls;
  if (o.hit) ++run.judge_cache_hits;
  auto [prompt, completion] = chain_tokens(o);
  run.judge_prompt_tokens += prompt;
  run.judge_completion_tokens += completion;
  run.prompt_tokens += prompt;
  run.completion_tokens += completion;
  if (o.reply.bucket != model::Bucket::none) {
    r.errored = true;
    r.detail = "the judge's call failed: " + model::to_string(o.reply.bucket) + ": " + o.reply.error;
    return r;
  }
  std::string why;
  auto verdict = check::parse_verdict(o.reply.text, why);
  if (!verdict) {
    r.errored = true;
    r.detail = why + ": " + std::string(utf8_prefix(redact(o.reply.text), 200));
    return r;
  }
  r.passed = verdict->pass;
  r.detail = verdict->pass ? "" : verdict->reason;
  r.reason = verdict->reason;
  return r;
}

// What the checks see of the reply. A hit's latency is the one recorded with
// it, so a replay judges the same latency as the recording did; 0 is how an
// entry stores a latency nobody measured, which is absent, not fast.
check::Reply check_view(const Obtained& o) {
  check::Reply v;
  v.text = o.reply.text;
  v.refused = o.reply.refused;
  if (!o.reply.finish_reason.empty()) v.finish_reason = o.reply.finish_reason;
  for (const auto& tc : o.reply.tool_calls)
    v.tool_calls.push_back({tc.name, tc.arguments});
  if (o.response.latency_ms > 0) v.latency_ms = o.response.latency_ms;
  return v;
}

// Evaluates the reply into the run: checks, answer, tokens.
void score(Shared& sh, const suite::Case& c, int replica, const Obtained& o, results::Run& run) {
  const model::Reply& reply = o.reply;
  if (reply.usage) {
    std::tie(run.prompt_tokens, run.completion_tokens) = chain_tokens(o);
    run.cache_read_tokens = reply.usage->cache_read_tokens;
    run.cache_write_tokens = reply.usage->cache_write_tokens;
  } else {
    run.usage_known = false;
  }
  for (const auto& tc : reply.tool_calls)
    run.tool_calls.push_back({tc.name, tc.arguments_sha256});
  if (reply.bucket == model::Bucket::context_length) {
    // A prompt that does not fit is the agent's failure, not infrastructure.
    run.checks.push_back({"context_length", false, reply.error});
    run.passed = false;
    return;
  }
  if (reply.bucket != model::Bucket::none) {
    run.error = model::to_string(reply.bucket);
    run.error_message = reply.error;
    run.passed = false;
    return;
  }
  std::string redacted = redact(reply.text);
  run.answer = std::string(utf8_prefix(redacted, results::k_answer_limit));
  run.answer_truncated = run.answer.size() < redacted.size();
  run.answer_sha256 = sha256_hex(normalize_answer(reply.text));
  run.passed = true;
  check::Reply seen = check_view(o);
  // Before any judge call adds its tokens: the check prices the model's.
  seen.cost_usd = metrics::run_cost(run, sh.route, sh.pricing);
  const check::ScriptRunner scripts = [&](const check::Check& chk, std::string_view answer) {
    return run_script(chk, answer, c, replica, sh.scripts);
  };
  seen.script = &scripts;
  for (const auto& chk : c.checks) {
    check::Result r = chk.type == check::Type::llm_judge ? judge(sh, c, chk, replica, reply.text, run)
                                                         : check::evaluate(chk, seen);
    run.passed = run.passed && r.passed;
    run.checks.push_back(results::check_result(r.label, r.passed, r.detail, r.reason));
    if (r.errored) {
      // A check that could not be evaluated says nothing about the agent.
      run.error = "check";
      run.error_message = r.label + ": " + r.detail;
      run.passed = false;
    }
  }
}

// What identifies an agent run's setup across reports: the command,
// fixture, timeout, input mode and the input itself.
std::string agent_fingerprint(const suite::Case& c, const config::Config& cfg) {
  boost::json::object o;
  boost::json::array argv;
  for (const auto& a : c.agent->command)
    argv.emplace_back(a);
  o["command"] = std::move(argv);
  o["fixture"] = c.agent->fixture;
  o["timeout"] = c.agent->timeout_s;
  o["input_file"] = c.agent->input_file;
  o["input"] = c.input.front().content;
  return cache::make_fingerprint(cfg.model.provider, "agent", json::canonical(o));
}

// False when the run was cut short by a stop request: it is not kept.
bool execute_agent(Shared& sh, const suite::Case& c, int replica, results::Run& run) {
  run.route = sh.route;
  agent::Job job{.suite = sh.in.suite,
                 .task = &c,
                 .run = replica,
                 .config = sh.in.config,
                 .tap = sh.tap,
                 .workdir_root = sh.in.workdir_root,
                 .keep_workdir = sh.in.keep_workdirs,
                 .stop = sh.in.stop,
                 .env = sh.in.env};
  agent::JobResult r = agent::run_job(job, run);
  if (!r.record_error.empty()) set_fatal(sh, Exit::cannot_run, r.record_error);
  std::lock_guard lock(sh.mutex);
  for (const auto& key : r.missing_keys)
    sh.outcome->misses.push_back({c.id, replica, key, ""});
  for (const auto& u : r.untrusted)
    sh.outcome->untrusted.push_back({c.id, replica, u.key, u.remote});
  for (const auto& u : r.tampered)
    sh.outcome->tampered.push_back({c.id, replica, u.key, u.remote});
  if (!r.missing_keys.empty()) {
    run.error = replay::k_miss_error;
    run.passed = false;
  }
  if (!r.kept_workdir.empty())
    sh.outcome->kept_workdirs.push_back("task " + c.id + " run " + std::to_string(replica) + ": " +
                                        r.kept_workdir.string());
  return !r.interrupted;
}

// False when the run did not happen after all (no client for its call, an
// agent stopped by a signal).
bool execute_one(Shared& sh, std::size_t case_index, int replica, results::Run& run) {
  const suite::Case& c = *sh.in.cases[case_index];
  if (c.kind == suite::Kind::agent) {
    run.index = replica;
    run.fingerprint = sh.prepared[case_index].fingerprint;
    return execute_agent(sh, c, replica, run);
  }
  const PreparedRequest& p = sh.prepared[case_index];
  run.index = replica;
  run.fingerprint = p.fingerprint;
  Obtained o = obtain(sh, p, replica, c.id, "task " + c.id);
  // No client (no key, a refused URL): the run was never made, so it is
  // not kept as a run at all, neither a failure nor a pass.
  if (o.no_client) return false;
  if (o.missed) {
    run.error = replay::k_miss_error;
    return true;
  }
  run.cache_hit = o.hit;
  run.attempts = o.attempts;
  if (o.hit) {
    run.route = route_from_json(o.route_text);
  } else {
    run.latency_ms = o.response.latency_ms;
    run.route = sh.route;
    record_attempts(o.response, run);
  }
  score(sh, c, replica, o, run);
  return true;
}

void worker(Shared& sh, std::vector<results::Task>& tasks, int runs, std::vector<char>& done) {
  const std::size_t total = tasks.size() * static_cast<std::size_t>(runs);
  for (;;) {
    if (sh.abort || (sh.in.stop != nullptr && sh.in.stop->load())) return;
    std::size_t job = sh.next.fetch_add(1);
    if (job >= total) return;
    std::size_t ci = job / static_cast<std::size_t>(runs);
    const std::size_t slot = job % static_cast<std::size_t>(runs);
    const int replica = sh.in.first_replica + static_cast<int>(slot);
    results::Run& run = tasks[ci].runs[slot];
    if (!execute_one(sh, ci, replica, run)) continue;
    done[job] = 1;
    if (sh.progress.run_done) sh.progress.run_done(run.cache_hit, run.errored());
  }
}

} // namespace

std::string normalize_answer(std::string_view answer) {
  std::string out;
  out.reserve(answer.size());
  bool space = false;
  for (char ch : answer) {
    if (ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r' || ch == '\f' || ch == '\v') {
      space = !out.empty();
    } else {
      if (space) out.push_back(' ');
      space = false;
      out.push_back(ch);
    }
  }
  return out;
}

results::Route configured_route(const config::Config& c) {
  results::Route r;
  const auto url = net::parse_url(c.model.base_url);
  r["provider"] = c.model.provider;
  r["model"] = c.model.name;
  r["base_url_host"] = url.host + ":" + url.port;
  r["base_url_path"] = url.path_prefix;
  // Azure's api-version changes what the deployment answers; written only
  // when set, so that other providers' routes stay as they were.
  if (!c.model.api_version.empty()) r["api_version"] = c.model.api_version;
  r["key_alias"] = c.model.key_alias;
  // What went on the wire ("unset" when a field was not sent).
  const model::WireSettings w = model::wire_settings(c.model);
  r["temperature"] = number_text(w.temperature);
  r["top_p"] = number_text(w.top_p);
  r["seed"] = number_text(w.seed);
  r["max_tokens"] = number_text(w.max_tokens);
  r["tool_schema_version"] = "none";
  r["gate_version"] = k_version;
  return r;
}

Outcome execute(const Inputs& in, const Progress& progress) {
  Outcome outcome;
  const auto& cfg = *in.config;
  Shared sh{.in = in, .progress = progress, .route = configured_route(cfg), .outcome = &outcome};
  sh.route_text = route_json(sh.route);
  if (!cfg.pricing.empty())
    sh.pricing = report::pricing_from_json(json::parse_strict(cfg.pricing, "pricing"), cfg.file.string());
  sh.scripts = {.suite = in.suite, .config = in.config, .env = in.env, .stop = in.stop};
  // Every request is built and hashed before the first run, on every core:
  // for a large suite this was a serial stretch as long as a third of the
  // replay itself.
  if (!in.requests.empty() && in.requests.size() != in.cases.size())
    throw std::invalid_argument("run::execute: one request per case, or none");
  sh.prepared.resize(in.cases.size());
  const std::size_t parts = parts_for(in.cases.size(), 2000);
  run_parallel(parts, [&](std::size_t part) {
    for (std::size_t i = in.cases.size() * part / parts; i < in.cases.size() * (part + 1) / parts; ++i) {
      const suite::Case& c = *in.cases[i];
      if (!in.requests.empty())
        sh.prepared[i] = in.requests[i];
      else
        sh.prepared[i] = c.kind == suite::Kind::agent ? PreparedRequest{{}, {}, agent_fingerprint(c, cfg)}
                                                      : prepare(c, cfg);
    }
  });
  if (!cfg.cache.ignore.empty()) refuse_shared_keys(in.cases, sh.prepared);
  std::unique_ptr<agent::Tap> tap;
  if (std::any_of(in.cases.begin(), in.cases.end(),
                  [](const auto* c) { return c->kind == suite::Kind::agent; })) {
    if (in.env == nullptr) throw_cannot_run("agent tasks need gate's environment (run::Inputs::env)");
    tap = std::make_unique<agent::Tap>(cfg, *in.env, [&sh]() -> model::ModelClient& { return sh.client(); });
    tap->trust(in.trusted);
    if (in.store != nullptr) tap->remote(in.store->remote());
    tap->start();
    sh.tap = tap.get();
  }

  const int runs = cfg.runs;
  outcome.tasks.resize(in.cases.size());
  for (std::size_t i = 0; i < in.cases.size(); ++i) {
    const auto& c = *in.cases[i];
    auto& t = outcome.tasks[i];
    t.id = c.id;
    t.scenario = c.scenario;
    t.difficulty = c.difficulty;
    t.group = c.group;
    // The question beside the answers in every report form: kept once per
    // task, its hash over the whole text.
    const std::string input = prompt::conversation_text(c);
    t.input_sha256 = sha256_hex(input);
    t.input_truncated = input.size() > results::k_input_limit;
    t.input = std::string(utf8_prefix(input, results::k_input_limit));
    t.runs.resize(static_cast<std::size_t>(runs));
  }
  if (progress.start) progress.start(in.cases.size() * static_cast<std::size_t>(runs));
  const std::size_t total = in.cases.size() * static_cast<std::size_t>(runs);
  const std::size_t workers = std::max<std::size_t>(1, std::min<std::size_t>(cfg.concurrency, total));
  sh.workers = static_cast<int>(workers);
  std::vector<char> done(total, 0); // one writer per slot; read after join
  std::vector<std::thread> threads;
  for (std::size_t i = 1; i < workers; ++i)
    threads.emplace_back([&] { worker(sh, outcome.tasks, runs, done); });
  worker(sh, outcome.tasks, runs, done);
  for (auto& t : threads)
    t.join();
  if (tap) tap->stop();
  if (progress.finish) progress.finish();

  if (std::find(done.begin(), done.end(), 0) != done.end()) {
    // A partial report keeps only runs that happened: a run never made must
    // not read as a failure (or a pass).
    outcome.complete = false;
    outcome.incomplete_reason = !outcome.fatal.empty() ? outcome.fatal : "interrupted";
    outcome.not_made = std::count(done.begin(), done.end(), 0);
    for (std::size_t i = 0; i < outcome.tasks.size(); ++i) {
      auto& rs = outcome.tasks[i].runs;
      std::vector<results::Run> kept;
      for (std::size_t r = 0; r < rs.size(); ++r)
        if (done[i * static_cast<std::size_t>(runs) + r]) kept.push_back(std::move(rs[r]));
      rs = std::move(kept);
    }
  } else if (!outcome.fatal.empty()) {
    outcome.complete = false;
    outcome.incomplete_reason = outcome.fatal;
  }
  for (auto* list : {&outcome.misses, &outcome.tampered, &outcome.untrusted})
    std::sort(list->begin(), list->end(), [](const Miss& a, const Miss& b) {
      return std::tie(a.task_id, a.run, a.key) < std::tie(b.task_id, b.run, b.key);
    });
  std::sort(outcome.warnings.begin(), outcome.warnings.end());
  std::sort(outcome.kept_workdirs.begin(), outcome.kept_workdirs.end());
  return outcome;
}

} // namespace gate::run

#include <gate/render/html_detail.hpp>

#include <map>

#include <gate/util/redact.hpp>
#include <gate/util/sha256.hpp>

namespace gate::render::html_detail {

namespace {

constexpr std::string_view k_css = R"css(
:root{--fg:#1f2328;--muted:#59636e;--line:#d1d9e0;--alt:#f6f8fa;--pass:#1a7f37;--fail:#cf222e;--warn:#9a6700;--base:#8c959f;--cur:#0969da}
*{box-sizing:border-box}
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);background:#fff;margin:0 auto;max-width:1280px;padding:16px 24px}
h1{font-size:22px;margin:8px 0}h2{font-size:18px;margin:28px 0 8px}h3{font-size:15px;margin:8px 0}h4{margin:2px 0 4px;font-size:14px}h5{margin:6px 0 2px;font-size:13px}
.headline{font-size:16px;font-weight:600;padding:10px 12px;border-radius:6px;border:1px solid var(--line)}
.headline.pass{background:#dafbe1;border-color:#aceebb}.headline.fail{background:#ffebe9;border-color:#ffcecb}
.fail-reason{color:var(--fail);font-weight:600}
.muted,.hint{color:var(--muted)}.small{font-size:12px}
ul.reasons li{color:var(--fail)}ul.warnings li{color:var(--warn)}
table{border-collapse:collapse;width:100%;margin:8px 0}
th,td{border:1px solid var(--line);padding:4px 8px;text-align:left;vertical-align:top}
th{background:var(--alt)}
td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
td.id{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;word-break:break-all}
tr.failed td.status{color:var(--fail);font-weight:600}tr.crossed td.status{color:var(--warn)}
#gate-tasks tbody tr{cursor:pointer}
#gate-tasks tbody tr:hover,#gate-tasks tbody tr:focus{background:var(--alt);outline:none}
#gate-tasks tbody tr.selected{background:#ddf4ff}
.badge{display:inline-block;padding:0 7px;margin:1px 3px 1px 0;border-radius:10px;font-size:12px;border:1px solid var(--line);white-space:nowrap}
.b-regressed,.b-failed,.b-removed{background:#ffebe9;color:var(--fail)}
.b-flipped,.b-flaky,.b-errored,.b-grader{background:#fff8c5;color:var(--warn)}
.b-fixed,.b-passed,.b-stable,.b-added{background:#dafbe1;color:var(--pass)}
.controls{display:flex;gap:16px;align-items:center;flex-wrap:wrap;margin:8px 0}
input[type=search]{min-width:300px;padding:4px 8px;font:inherit}select{font:inherit}
[hidden]{display:none!important}
#gate-detail{border:1px solid var(--line);border-radius:6px;padding:8px 16px;margin:16px 0}
.sides{display:grid;grid-template-columns:1fr;gap:16px}.sides.two{grid-template-columns:1fr 1fr}
.run{border:1px solid var(--line);border-left:4px solid var(--base);border-radius:4px;padding:6px 10px;margin:8px 0}
.run.pass{border-left-color:var(--pass)}.run.fail{border-left-color:var(--fail)}.run.errored{border-left-color:var(--warn)}
dl{display:grid;grid-template-columns:max-content 1fr;gap:2px 12px;margin:4px 0}dt{color:var(--muted)}dd{margin:0;word-break:break-word}
ul.checks{padding-left:18px;margin:4px 0}li.pass{color:var(--pass)}li.fail{color:var(--fail)}
pre{white-space:pre-wrap;word-break:break-word;background:var(--alt);padding:6px 8px;border-radius:4px;margin:4px 0;font:12px/1.4 ui-monospace,SFMono-Regular,Menlo,monospace}
#gate-errors{color:var(--fail)}
button.close{float:right;font:inherit}
svg text{font:12px system-ui,sans-serif;fill:var(--fg)}
svg.chart{max-width:100%;height:auto}rect.base{fill:var(--base)}rect.cur{fill:var(--cur)}
@media (max-width:800px){.sides.two{grid-template-columns:1fr}}
)css";

// First script, in <head>: reports any later script error (a syntax error
// in the main script included) in #gate-errors, where a reader, and the
// browser test, can see it.
constexpr std::string_view k_error_js = R"js(
window.onerror = function (message, source, line, column) {
  var p = document.getElementById('gate-errors');
  if (!p) return false;
  p.textContent += String(message) + ' (line ' + line + ':' + column + ')\n';
  p.hidden = false;
  return false;
};
window.addEventListener('unhandledrejection', function (e) {
  var p = document.getElementById('gate-errors');
  if (p) { p.textContent += 'unhandled rejection: ' + String(e.reason) + '\n'; p.hidden = false; }
});
)js";

// The main script. Data reaches the DOM through textContent and
// setAttribute only, never as markup.
constexpr std::string_view k_main_js = R"js(
(function () {
  'use strict';
  var data = JSON.parse(document.getElementById('gate-data').textContent);
  var tasks = data.tasks, answers = data.answers;
  var rows = document.getElementById('gate-tasks').tBodies[0].rows;
  var search = document.getElementById('gate-search');
  var status = document.getElementById('gate-status');
  var count = document.getElementById('gate-count');
  var panel = document.getElementById('gate-detail');
  var selected = null;

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }
  function matches(t, q, s) {
    if (s && t.status.indexOf(s) < 0) return false;
    return !q || t.id.toLowerCase().indexOf(q) >= 0 || t.scenario.toLowerCase().indexOf(q) >= 0;
  }
  function filter() {
    var q = search.value.trim().toLowerCase(), s = status.value, shown = 0;
    for (var i = 0; i < rows.length; i++) {
      var hit = matches(tasks[+rows[i].getAttribute('data-i')], q, s);
      rows[i].hidden = !hit;
      if (hit) shown++;
    }
    count.textContent = shown + ' of ' + rows.length + ' tasks shown';
  }
  function field(dl, name, value) {
    dl.appendChild(el('dt', null, name));
    dl.appendChild(el('dd', null, value));
  }
  function runView(r, side) {
    var state = r.error ? 'errored' : r.passed ? 'pass' : 'fail';
    var box = el('section', 'run ' + state);
    box.setAttribute('data-side', side);
    box.setAttribute('data-run', String(r.index));
    box.appendChild(el('h4', null, 'run ' + (r.index + 1) + ': ' +
      (r.error ? 'errored (' + r.error + ')' : r.passed ? 'passed' : 'failed')));
    var dl = el('dl');
    field(dl, 'passed', r.passed ? 'yes' : 'no');
    if (r.error) field(dl, 'error', r.error + (r.error_message ? ': ' + r.error_message : ''));
    field(dl, 'tokens', r.usage_known !== false ? r.prompt_tokens + ' prompt + ' + r.completion_tokens + ' completion'
                                      : 'not reported by the provider');
    field(dl, 'latency', r.cache_hit ? 'none (cache hit)' : r.latency);
    field(dl, 'cache hit', r.cache_hit ? 'yes' : 'no');
    field(dl, 'attempts', String(r.attempts || 1));
    if (r.tools && r.tools.length) field(dl, 'tool calls', r.tools.join(' \u2192 '));
    box.appendChild(dl);
    if (r.checks.length) {
      var ul = el('ul', 'checks');
      r.checks.forEach(function (c) {
        ul.appendChild(el('li', c.passed ? 'pass' : 'fail',
          (c.passed ? '\u2714 ' : '\u2718 ') + c.label + (c.detail ? ' \u2014 ' + c.detail : '')));
      });
      box.appendChild(ul);
    }
    box.appendChild(el('h5', null, 'answer' +
      (r.answer_truncated ? ' (cut at 2,000 bytes by gate)' : '') +
      (r.answer_shortened ? ' (cut to ' + data.short_answer_bytes + ' bytes in this page)' : '')));
    box.appendChild(el('pre', 'answer', answers[r.answer]));
    return box;
  }
  function sideView(title, s, key) {
    var col = el('div', 'side');
    col.setAttribute('data-side', key);
    var head = title;
    if (s && s.n !== null) head += ': ' + s.c + '/' + s.n + ' passed' + (s.errored ? ', ' + s.errored + ' errored' : '');
    col.appendChild(el('h3', null, head));
    if (!s) col.appendChild(el('p', 'muted', 'not in this report'));
    else if (!s.runs.length) col.appendChild(el('p', 'muted', 'no runs'));
    else s.runs.forEach(function (r) { col.appendChild(runView(r, key)); });
    return col;
  }
  function clear(node) { while (node.firstChild) node.removeChild(node.firstChild); }
  function close() {
    panel.hidden = true;
    clear(panel);
    if (selected) selected.classList.remove('selected');
    selected = null;
  }
  function open(i) {
    var t = tasks[i];
    clear(panel);
    var b = el('button', 'close', 'close');
    b.type = 'button';
    b.addEventListener('click', close);
    panel.appendChild(b);
    panel.appendChild(el('h2', 'id', t.id));
    panel.appendChild(el('p', 'muted', 'scenario: ' + (t.scenario || '(none)') + ' \u00b7 status: ' + t.status.join(', ')));
    if (t.diff) {
      var notes = ['Fisher one-sided p = ' + t.diff.p.toPrecision(3) + ', Benjamini\u2013Hochberg q = ' + t.diff.q.toPrecision(3)];
      if (t.diff.inputs_unchanged) notes.push('inputs unchanged (every request replayed)');
      if (t.diff.grader_change) notes.push('outcome changed on unchanged inputs: a check or grader change');
      if (t.diff.first_divergence !== null) notes.push('tool calls first diverge at step ' + t.diff.first_divergence);
      panel.appendChild(el('p', 'muted', notes.join(' \u00b7 ')));
    }
    if (t.input !== undefined) {
      panel.appendChild(el('h3', null, 'input' + (t.input_truncated ? ' (cut at 4,000 bytes by gate)' : '') +
        (t.baseline_input !== undefined ? ' (current; the baseline sent another)' : '')));
      panel.appendChild(el('pre', 'input', t.input));
      if (t.baseline_input !== undefined) {
        panel.appendChild(el('h3', null, 'baseline input'));
        panel.appendChild(el('pre', 'input', t.baseline_input));
      }
    }
    var grid = el('div', 'sides two');
    grid.appendChild(sideView('baseline', t.b, 'baseline'));
    grid.appendChild(sideView('current', t.a, 'current'));
    panel.appendChild(grid);
    panel.setAttribute('data-task', t.id);
    panel.hidden = false;
    if (selected) selected.classList.remove('selected');
    selected = null;
    for (var j = 0; j < rows.length; j++) {
      if (+rows[j].getAttribute('data-i') === i) { selected = rows[j]; selected.classList.add('selected'); }
    }
  }
  function rowIndex(e) {
    var tr = e.target.closest('tr');
    return tr && tr.hasAttribute('data-i') ? +tr.getAttribute('data-i') : -1;
  }
  var body = document.getElementById('gate-tasks').tBodies[0];
  body.addEventListener('click', function (e) { var i = rowIndex(e); if (i >= 0) open(i); });
  body.addEventListener('keydown', function (e) {
    if (e.key !== 'Enter' && e.key !== ' ') return;
    var i = rowIndex(e);
    if (i >= 0) { e.preventDefault(); open(i); }
  });
  search.addEventListener('input', filter);
  status.addEventListener('change', filter);

  var params = new URLSearchParams(window.location.search);
  if (params.has('q')) search.value = params.get('q');
  if (params.has('status')) status.value = params.get('status');
  filter();
  if (params.has('open')) {
    var want = params.get('open'), found = -1;
    for (var k = 0; k < tasks.length && found < 0; k++) if (tasks[k].id === want) found = k;
    if (found >= 0) open(found);
    else { clear(panel); panel.appendChild(el('p', 'muted', 'No task with id ' + want + '.')); panel.hidden = false; }
  }
  document.documentElement.setAttribute('data-gate-ready', '1');
})();
)js";

// 'sha256-<base64>' of `source`, for the Content-Security-Policy.
std::string csp_hash(std::string_view source) {
  std::string hex = sha256_hex(source), bytes;
  for (std::size_t i = 0; i + 1 < hex.size(); i += 2)
    bytes += static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16));
  return "'sha256-" + base64_encode(bytes) + "'";
}

std::string counts(const Side& s) {
  if (!s.task) return "—";
  if (!s.stats) return "?";
  std::string out = std::to_string(s.stats->c) + "/" + std::to_string(s.stats->n);
  if (s.stats->errored > 0) out += " +" + std::to_string(s.stats->errored) + " err";
  return out;
}

std::string css_class(const std::string& status) {
  std::string out;
  for (char c : status)
    out += c == ' ' ? '-' : c;
  return out;
}

void badges(const TaskEntry& t, std::string& out) {
  for (const std::string& s : t.status)
    out += "<span class=\"badge b-" + css_class(s) + "\">" + text(s) + "</span>";
  if (t.diff && t.diff->grader_change) out += "<span class=\"badge b-grader\">check or grader change</span>";
}

} // namespace

void task_section(const std::vector<TaskEntry>& tasks, std::size_t shortened, const HtmlOptions& o,
                  std::string& out) {
  std::map<std::string, std::size_t> per_status;
  for (const TaskEntry& t : tasks)
    for (const std::string& s : t.status)
      ++per_status[s];

  out += "<section id=\"gate-task-section\">\n<h2>Tasks</h2>\n<div class=\"controls\">"
         "<label>Search <input id=\"gate-search\" type=\"search\" placeholder=\"task id or scenario\" "
         "autocomplete=\"off\" spellcheck=\"false\"></label>"
         "<label>Status <select id=\"gate-status\"><option value=\"\">all</option>";
  for (const std::string& s : verdict_statuses()) {
    auto it = per_status.find(s);
    if (it == per_status.end()) continue;
    out += "<option value=\"" + text(s) + "\">" + text(s) + " (" + std::to_string(it->second) + ")</option>";
  }
  out += "</select></label><span id=\"gate-count\" class=\"muted\">" + std::to_string(tasks.size()) +
         " tasks</span></div>\n";
  out += "<p class=\"hint\">Click a row to see its runs, baseline and current side by side.</p>\n";
  out += "<noscript><p class=\"hint\">The search and the run details need JavaScript.</p></noscript>\n";
  if (shortened > 0)
    out += "<p class=\"hint\">" + std::to_string(shortened) + " answers are cut to " +
           std::to_string(o.short_answer_bytes) +
           " bytes in this page to keep it small; the JSON report holds them in full.</p>\n";
  out += "<table id=\"gate-tasks\"><thead><tr><th>Task</th><th>Scenario</th>";
  out += "<th>Baseline</th><th>Current</th>";
  out += "<th>Status</th></tr></thead>\n<tbody>\n";
  for (std::size_t i = 0; i < tasks.size(); ++i) {
    const TaskEntry& t = tasks[i];
    out += "<tr data-i=\"" + std::to_string(i) + "\" tabindex=\"0\" class=\"st-" +
           css_class(t.status.front()) + "\"><td class=\"id\">" + text(t.id) + "</td><td>" +
           text(t.scenario) + "</td>";
    out += "<td class=\"num\">" + counts(t.base) + "</td>";
    out += "<td class=\"num\">" + counts(t.cur) + "</td><td>";
    badges(t, out);
    out += "</td></tr>\n";
  }
  out += "</tbody></table>\n</section>\n<section id=\"gate-detail\" hidden></section>\n";
}

std::string page(std::string_view title, std::string_view body, std::string_view data) {
  std::string out;
  out.reserve(body.size() + data.size() + k_css.size() + k_main_js.size() + 2048);
  // Nothing may be fetched: the page must work offline from file://, and
  // an injected element could not phone home even if one got through.
  std::string csp = "default-src 'none'; script-src " + csp_hash(k_error_js) + " " + csp_hash(k_main_js) +
                    "; style-src " + csp_hash(k_css) + "; img-src data:; base-uri 'none'; form-action 'none'";
  out += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
         "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
         "<meta http-equiv=\"Content-Security-Policy\" content=\"" +
         csp + "\">\n<meta name=\"referrer\" content=\"no-referrer\">\n<title>" + text(title) +
         "</title>\n<style>";
  out += k_css;
  out += "</style>\n<script>";
  out += k_error_js;
  out += "</script>\n</head>\n<body>\n";
  out += body;
  out += "<pre id=\"gate-errors\" hidden></pre>\n<script type=\"application/json\" id=\"gate-data\">";
  out += data;
  out += "</script>\n<script>";
  out += k_main_js;
  out += "</script>\n</body>\n</html>\n";
  return out;
}

} // namespace gate::render::html_detail

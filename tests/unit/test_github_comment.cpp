#include <doctest.h>

#include <boost/json.hpp>
#include <map>

#include <gate/github/github.hpp>
#include <gate/util/error.hpp>

using namespace gate;

namespace {

// An in-memory GitHub: comments on one PR, `page_size` per page.
struct FakeApi {
  std::vector<std::pair<std::int64_t, std::string>> comments;
  std::size_t page_size = 2;
  int list_status = 200, write_status = 0; // 0 = behave
  std::size_t max_body = 1000000;
  std::vector<net::FetchRequest> log;

  model::ApiResponse operator()(const net::FetchRequest& r) {
    log.push_back(r);
    model::ApiResponse out;
    const std::string base = "https://api.test/repos/o/r";
    if (r.method == "GET") {
      out.status = list_status;
      if (list_status != 200) return out;
      std::size_t page = 1;
      if (auto at = r.url.find("&page="); at != std::string::npos) page = std::stoul(r.url.substr(at + 6));
      boost::json::array items;
      for (std::size_t i = (page - 1) * page_size; i < std::min(comments.size(), page * page_size); ++i)
        items.push_back(boost::json::object{{"id", comments[i].first}, {"body", comments[i].second}});
      if (page * page_size < comments.size())
        out.headers.emplace_back(
            "link", "<" + base + "/issues/7/comments?per_page=100&page=" + std::to_string(page + 1) +
                        ">; rel=\"next\", <" + base + "/issues/7/comments?page=9>; rel=\"last\"");
      out.body = boost::json::serialize(items);
      return out;
    }
    const std::string text(boost::json::parse(r.body).at("body").as_string());
    if (write_status != 0) {
      out.status = write_status;
      out.body = R"({"message":"Resource not accessible by integration"})";
      return out;
    }
    if (text.size() > max_body) {
      out.status = 422;
      out.body =
          R"x({"message":"Validation Failed","errors":[{"message":"Body is too long (maximum is 65536 characters)"}]})x";
      return out;
    }
    std::int64_t id = 0;
    if (r.method == "POST") {
      id = 1000 + static_cast<std::int64_t>(comments.size());
      comments.emplace_back(id, text);
      out.status = 201;
    } else {
      id = std::stoll(r.url.substr(r.url.rfind('/') + 1));
      for (auto& c : comments)
        if (c.first == id) c.second = text;
      out.status = 200;
    }
    out.body = boost::json::serialize(boost::json::object{{"id", id}});
    return out;
  }
};

github::Target target() { return {"https://api.test", "o/r", 7, "ghs_canary_token"}; }

github::Posted upsert(FakeApi& api, const std::string& body, const std::string& short_body = "") {
  const std::string mark = github::marker("verdict");
  return github::upsert_comment(target(), mark, mark + body, mark + short_body,
                                [&](const net::FetchRequest& r) { return api(r); });
}

} // namespace

TEST_CASE("marker, Link header, character count and the event's PR number") {
  CHECK(github::marker("demo v1") == "<!-- gate:demov1 -->");
  CHECK(github::marker("--><script>") == "<!-- gate:--script -->");
  CHECK(github::marker("") == "<!-- gate:verdict -->");
  net::Headers h{{"link", "<https://a/x?page=1>; rel=\"prev\", <https://a/x?page=3>; rel=\"next\""}};
  CHECK(github::next_link(h) == std::optional<std::string>("https://a/x?page=3"));
  CHECK_FALSE(github::next_link({{"link", "<https://a/x?page=1>; rel=\"prev\""}}));
  CHECK_FALSE(github::next_link({}));
  // "é" is 2 bytes, "€" 3, "😀" 4: 1 + 1 + 1 + 1 ("a") = 4 characters.
  CHECK(github::char_count("é€😀a") == 4);
  CHECK(github::pr_from_event(R"({"pull_request":{"number":42}})", "event.json") == 42);
  CHECK(github::pr_from_event(R"({"number":5,"issue":{}})", "event.json") == 5);
  CHECK_THROWS_AS(github::pr_from_event(R"({"ref":"refs/heads/main"})", "event.json"), Error);
}

TEST_CASE("the first call creates the comment, the second edits the same one") {
  FakeApi api;
  api.comments = {{1, "a human's comment"}};
  auto first = upsert(api, "\nfirst verdict");
  CHECK(first.outcome == github::Outcome::created);
  CHECK(first.comment_id == 1001);
  REQUIRE(api.comments.size() == 2);
  auto second = upsert(api, "\nsecond verdict");
  CHECK(second.outcome == github::Outcome::updated);
  CHECK(second.comment_id == 1001);
  REQUIRE(api.comments.size() == 2);
  CHECK(api.comments[1].second == "<!-- gate:verdict -->\nsecond verdict");
  CHECK(api.log.back().method == "PATCH");
  CHECK(api.log.back().url == "https://api.test/repos/o/r/issues/comments/1001");
  for (const auto& r : api.log) {
    bool auth = false;
    for (const auto& [k, v] : r.headers)
      auth = auth || (k == "authorization" && v == "Bearer ghs_canary_token");
    CHECK(auth);
  }
}

TEST_CASE("the marker is found on a later page") {
  FakeApi api;
  api.comments = {{1, "a"}, {2, "b"}, {3, "c"}, {4, "d"}, {5, "<!-- gate:verdict -->\nold"}};
  auto p = upsert(api, "\nnew");
  CHECK(p.outcome == github::Outcome::updated);
  CHECK(p.comment_id == 5);
  CHECK(p.pages == 3); // 2 + 2 + 1 comments
  CHECK(api.comments[4].second == "<!-- gate:verdict -->\nnew");
}

TEST_CASE("a marker quoted inside someone's comment is not gate's comment") {
  FakeApi api;
  api.comments = {{1, "> <!-- gate:verdict -->\nquoted"}};
  CHECK(upsert(api, "\nx").outcome == github::Outcome::created);
}

TEST_CASE("a next link to another origin is not followed with the token") {
  FakeApi api;
  api.comments = {{1, "a"}, {2, "b"}, {3, "<!-- gate:verdict -->"}};
  auto send = [&](const net::FetchRequest& r) {
    auto out = api(r);
    for (auto& [k, v] : out.headers)
      if (k == "link") v = "<https://evil.test/steal?page=2>; rel=\"next\"";
    return out;
  };
  const std::string mark = github::marker("verdict");
  auto p = github::upsert_comment(target(), mark, mark + "x", mark, send);
  CHECK(p.pages == 1);
  for (const auto& r : api.log)
    CHECK(r.url.find("evil.test") == std::string::npos);
}

TEST_CASE("403 is a warning outcome, not an error") {
  FakeApi api;
  api.write_status = 403;
  auto p = upsert(api, "\nx");
  CHECK(p.outcome == github::Outcome::forbidden);
  CHECK(p.warning == "Resource not accessible by integration");
  FakeApi reading;
  reading.list_status = 403;
  CHECK(upsert(reading, "\nx").outcome == github::Outcome::forbidden);
}

TEST_CASE("422 too long posts the short form; an over-limit body goes short at once") {
  FakeApi api;
  api.max_body = 100;
  auto p = upsert(api, "\n" + std::string(500, 'x'), "\nshort");
  CHECK(p.outcome == github::Outcome::created);
  CHECK(p.truncated);
  REQUIRE(api.comments.size() == 1);
  CHECK(api.comments[0].second == "<!-- gate:verdict -->\nshort");

  FakeApi big;
  // 65,537 characters of "é" (2 bytes each) exceed GitHub's 65,536.
  std::string huge;
  for (int i = 0; i < 65537; ++i)
    huge += "é";
  auto q = upsert(big, huge, "\nshort");
  CHECK(q.truncated);
  CHECK(big.log.size() == 2); // one list, one POST: no doomed attempt
}

TEST_CASE("401, 404 and no answer are errors that could not run (exit 3)") {
  for (int status : {0, 401, 404, 500}) {
    FakeApi api;
    api.list_status = status;
    try {
      upsert(api, "\nx");
      FAIL("expected an error");
    } catch (const Error& e) {
      CHECK(e.code() == Exit::cannot_run);
    }
  }
}

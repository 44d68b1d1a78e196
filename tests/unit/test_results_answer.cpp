#include <doctest.h>

#include <gate/results/results.hpp>

using gate::results::AgentRun;
using gate::results::Run;
using gate::results::shown_answer;

TEST_CASE("shown_answer: the model's text, or an agent run's exit status and stdout") {
  Run plain;
  plain.answer = "Paris";
  CHECK(shown_answer(plain) == "Paris");
  CHECK(shown_answer(Run{}).empty());

  Run agent;
  AgentRun a;
  a.exit_code = 1;
  a.stdout_excerpt = "answer.txt not written";
  agent.agent = a;
  CHECK(shown_answer(agent) == "exit 1; stdout: answer.txt not written");
  agent.agent->timed_out = true;
  agent.agent->exit_code = -1;
  agent.agent->stdout_excerpt.clear();
  CHECK(shown_answer(agent) == "exit -1 (timed out)");
  agent.answer = "text the agent's run did produce"; // an answer, when there is one, wins
  CHECK(shown_answer(agent) == "text the agent's run did produce");
}

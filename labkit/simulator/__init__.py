"""The simulated teaching model (`labkit.simulator`): a deterministic, rule-based LLM stand-in, labelled simulated.

It speaks three real wire formats (Anthropic Messages, OpenAI Chat Completions, OpenAI Responses)
so the real `anthropic` and `openai` SDK clients can talk to it offline. It decides in this order:

0. in the **naive** scenario (`_naive.py`, notebook 07) it obeys any instruction it finds in its
   context, so that attacks succeed deterministically when the host's defences are off;
1. a **playbook** (`_playbooks.py`) chosen by the `x-teaching-scenario` header or by the first
   user message — this is what makes every lesson cell say exactly what its author intends;
2. a **skill** from the catalog in its instructions (`_skill_policy.py`, notebook 06): it loads
   the one whose description matches the user's words and follows its Method, sending the
   skill's calls as written;
3. if the last turn holds tool results, it **summarises** them (errors included) and stops, so
   a loop driven by the fallback always ends;
4. with no tools, or `tool_choice: none`, it answers in text and says why;
5. otherwise a **rule-based fallback** scores the offered tools against the user's words and
   fills arguments from them by the schema, or asks back for a missing required parameter.

Limits, stated plainly: the matching is keyword-based and English-only, with crude stemming and
no language understanding; arguments come from patterns (enum words, numbers, ISO dates, quoted
strings, `name=value`, "<x>-<param>" words, capitalised place names); summaries are templates;
token counts are word counts; there is no streaming. Nothing here is an LLM, and every text it
writes starts with "[simulated] ".

The host never imports this wing: it reaches the model through the real SDK clients' HTTP transport,
as it would reach a provider (`labkit.make_client` wires `teaching_transport()` in).
"""

from ._dialogue import Dialogue
from ._handler import TeachingModel
from ._naive import NAIVE_SCENARIO
from ._playbooks import SCENARIOS, Scenario
from ._policy import decide
from ._server import TeachingServer
from ._skill_reading import choose_skill, read_catalog, read_method, shared_words
from ._stamps import MODEL_NAME
from ._transport import teaching_transport

__all__ = [
    "MODEL_NAME",
    "NAIVE_SCENARIO",
    "SCENARIOS",
    "Dialogue",
    "Scenario",
    "TeachingModel",
    "TeachingServer",
    "choose_skill",
    "decide",
    "read_catalog",
    "read_method",
    "shared_words",
    "teaching_transport",
]

"""More dev questions about the real chats of bench/_chitchat.py (issue 16, item 4, second pass).

Written from reading four randomly drawn conversations (``random.seed(2026)``,
``random.sample(sessions(), 8)``: 2c127f1d, ad23c479, 69f79455, fa441c9e) before any ranking was
run on them, and committed before the first run. They are pinned to dev: the first dev split
(26 questions) was too small to tune on; the held-out set is unchanged.
"""

from __future__ import annotations

from _recall_questions import LATE, Question


def _d(user: str, kind: str, text: str, *turns: str, at: str = LATE) -> Question:
    return Question(user, text, turns, kind, at, pinned="dev")


DEV_EXTRA = [
    # cc-ana, 2018-05-12: basketball with Marcus
    _d("cc-ana", "person", "Who is Marcus's favourite NBA player?", "2c127f1d-2"),
    _d("cc-ana", "event", "Which basketball player did I say I prefer?", "2c127f1d-3"),
    _d("cc-ana", "meaning", "How tall and heavy is Marcus?", "2c127f1d-46"),
    _d("cc-ana", "event", "Who did I bet would win the finals, and in how many games?",
       "2c127f1d-45"),
    _d("cc-ana", "person", "Why did Marcus stop following college basketball?", "2c127f1d-52"),
    _d("cc-ana", "meaning", "Who do I think is the best basketball player ever?", "2c127f1d-29"),
    # cc-ben, 2018-05-10: the chat competition with Tessa
    _d("cc-ben", "person", "What did Tessa do on the day she had team pictures?", "ad23c479-8"),
    _d("cc-ben", "event", "What are the prizes of the chit chat challenge?",
       "ad23c479-38", "ad23c479-41"),
    _d("cc-ben", "meaning", "Why was I feeling down about the competition?", "ad23c479-9"),
    _d("cc-ben", "person", "What did Tessa offer to do about the guy in first place?",
       "ad23c479-14", "ad23c479-28"),
    _d("cc-ben", "time", "What did Tessa offer to buy from me on May 10?", "ad23c479-50"),
    _d("cc-ben", "event", "Did I already win an iPad?", "ad23c479-45"),
    # cc-ana, 2018-05-16 (a Wednesday): childhood memories with Marcus
    _d("cc-ana", "event", "What was my first pet's name?", "69f79455-13"),
    _d("cc-ana", "person", "Is Marcus an early bird or a night owl?", "69f79455-44"),
    _d("cc-ana", "meaning", "Which of my family's dogs ran away?", "69f79455-25"),
    _d("cc-ana", "meaning", "What religious relic did I hear about on a podcast?", "69f79455-39"),
    _d("cc-ana", "time", "Where did I say my parents met last Wednesday?",
       "69f79455-52", "69f79455-53"),
    # cc-dev, 2018-04-24: end of semester with Rowan
    _d("cc-dev", "event", "Why did I spend the night with tech support?", "fa441c9e-6"),
    _d("cc-dev", "person", "What happened to Rowan's paper on Google Drive?", "fa441c9e-19"),
    _d("cc-dev", "person", "What subject was Rowan's last final?", "fa441c9e-29"),
    _d("cc-dev", "person", "What grade does Rowan need on his final?", "fa441c9e-31"),
    _d("cc-dev", "meaning", "What happened to my long research paper before I used the cloud?",
       "fa441c9e-20"),
    _d("cc-dev", "person", "Which hard econ class did Rowan get an A in?", "fa441c9e-45"),
    _d("cc-dev", "when", "When did Rowan sell his old laptop?", "fa441c9e-13"),
]

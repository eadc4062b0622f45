"""Questions about the real chats of bench/_chitchat.py, written from reading the conversations
before any ranking was looked at (committed before the first run of the benchmark).

Each question names the Iris user it is asked by, the turns that answer it (any one counts), its
kind, and when it is asked (the clock the search runs under; "last Tuesday" means the Tuesday
before that). Kinds: event (something that happened or was said), person (what the other person,
by name, said or is), time (needs a date or a relative time resolved against the clock and the
sessions' dates), when (asked as "When did…"), change (a change of mind or of plans), meaning
(worded with few or none of the answer's words).

Dev / held-out: by a hash of the question's text (``split``); tuning looks at dev only.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

LATE = "2018-05-20T12:00:00Z"  # a Sunday after the last session


@dataclass(frozen=True)
class Question:
    user: str
    text: str
    turns: tuple[str, ...]
    kind: str
    asked_at: str = LATE
    pinned: str = ""  # a split chosen by hand (bench/_recall_dev_extra.py: dev)

    @property
    def split(self) -> str:
        if self.pinned:
            return self.pinned
        digest = hashlib.sha256(self.text.encode()).digest()
        return "dev" if digest[0] % 10 < 4 else "held-out"


def _q(user: str, kind: str, text: str, *turns: str, at: str = LATE) -> Question:
    return Question(user, text, turns, kind, at)


QUESTIONS = [
    # cc-cleo: the person called Marcus, April 23 – May 11
    _q("cc-cleo", "event", "What did I say my major was?", "ce31a621-24", "ce31a621-26",
       "0f462a4e-196"),
    _q("cc-cleo", "person", "What is Marcus studying?", "ce31a621-27", "ce31a621-31"),
    _q("cc-cleo", "person", "Why did Marcus pick IT over computer science?", "ce31a621-31"),
    _q("cc-cleo", "person", "Why did Marcus choose BYU?", "ce31a621-37"),
    _q("cc-cleo", "change", "Did I get into university the first time I applied?",
       "ce31a621-38"),
    _q("cc-cleo", "person", "Which superpower would Marcus want?", "ce31a621-155"),
    _q("cc-cleo", "event", "Which game did I fall out with a friend over?", "ce31a621-186"),
    _q("cc-cleo", "event", "How many years did I play piano?", "a969b8c7-9"),
    _q("cc-cleo", "event", "Which soundtrack am I obsessed with?", "a969b8c7-21"),
    _q("cc-cleo", "meaning", "Was Marcus let down by a film adaptation of a novel?",
       "0f462a4e-93", "0f462a4e-95"),
    _q("cc-cleo", "person", "What languages does Marcus speak?", "0f462a4e-225"),
    _q("cc-cleo", "event", "What does my dad do for a living?", "0f462a4e-248"),
    _q("cc-cleo", "meaning", "What coding project did I build with numbers that are symmetric?",
       "0f462a4e-242", "0f462a4e-244", "0f462a4e-246"),
    _q("cc-cleo", "event", "How do I like my steak cooked?", "0f462a4e-152", "0f462a4e-153",
       "0f462a4e-154"),
    _q("cc-cleo", "person", "Why won't Marcus use the hot tubs at apartments?", "0f462a4e-219"),
    _q("cc-cleo", "time", "On May 1, what did I say about the weather where my parents are?",
       "a321dba7-20"),
    _q("cc-cleo", "person", "What did Marcus say about North Korea?", "a321dba7-37"),
    _q("cc-cleo", "time", "What did I tell Marcus on Tuesday about snow?", "a321dba7-20",
       at="2018-05-04T18:00:00Z"),
    _q("cc-cleo", "meaning", "Where would Marcus live if he could pick anywhere?",
       "ce31a621-145", "ce31a621-147"),
    _q("cc-cleo", "event", "Where did I serve my mission?", "0f462a4e-158", "ce31a621-126"),
    # cc-dev: the person called Rowan, April 21 – May 12
    _q("cc-dev", "person", "What is Rowan's favourite smell?", "d83e550e-9"),
    _q("cc-dev", "person", "What project did Rowan's teacher assign him?", "f67b259e-6"),
    _q("cc-dev", "meaning", "What computer is Rowan saving up for?", "fa441c9e-13"),
    _q("cc-dev", "event", "Which software would not work on my new computer?", "fa441c9e-6"),
    _q("cc-dev", "meaning", "Where will I sleep in the days between moving out and my flight?",
       "1b77c691-7", "1b77c691-9"),
    _q("cc-dev", "event", "What did I make for a friend finishing their last exam?",
       "400962d2-2"),
    _q("cc-dev", "person", "What sum did Rowan's older sister give him when they played school?",
       "49678ea8-28"),
    _q("cc-dev", "change", "Why did Rowan change his mind and go for ten degrees warmer?",
       "2f985867-18"),
    _q("cc-dev", "event", "What news did Rowan share about his brother?", "a70db6e0-6"),
    _q("cc-dev", "event", "Where am I travelling to see the touring ballroom team?",
       "952b1e03-13"),
    _q("cc-dev", "time", "What were Rowan's weekend plans he told me about last Thursday?",
       "952b1e03-14", at="2018-05-09T18:00:00Z"),
    _q("cc-dev", "person", "Which class is Rowan taking to learn proper form in the gym?",
       "952b1e03-18"),
    _q("cc-dev", "meaning", "How did Rowan describe particles that copy each other at a distance?",
       "c6f714c0-8", "c6f714c0-10"),
    _q("cc-dev", "person", "How did Rowan get sunburnt?", "fe7ad417-8"),
    _q("cc-dev", "meaning", "Why is Rowan's washer fluid always gone?", "d64d39b2-17"),
    _q("cc-dev", "event", "Why don't I like meeting people online?", "35d1901d-10"),
    _q("cc-dev", "person", "What does Rowan order at the Brazilian grill?", "b2ffcc1a-11"),
    _q("cc-dev", "event", "What do I always order at the place in Charleston?", "b2ffcc1a-12"),
    _q("cc-dev", "meaning", "What are my duties at the home repair business?", "cedfe70c-8"),
    _q("cc-dev", "time", "What chores did I get done on Thursday?", "469d5817-6",
       "34aa9afb-13", at="2018-05-12T18:00:00Z"),
    _q("cc-dev", "when", "When did I have a dentist appointment?", "34aa9afb-13"),
    _q("cc-dev", "when", "When did Rowan's brother get his mission call?", "a70db6e0-6"),
    _q("cc-dev", "when", "When did I fill up my mom's car tires?", "d6752827-4"),
    # cc-ben: the person called Tessa, May 6 – May 16
    _q("cc-ben", "person", "What superpower would Tessa want?", "8d503db3-0"),
    _q("cc-ben", "person", "What position did one of the shortest girls on Tessa's team play?",
       "8d503db3-12"),
    _q("cc-ben", "person", "What did Tessa's team win recently?", "889f2c10-14"),
    _q("cc-ben", "meaning", "What jobs has Tessa thought about going into?", "dfe61c6c-12"),
    _q("cc-ben", "event", "Which math class did I tell Tessa she needs?", "dfe61c6c-19"),
    _q("cc-ben", "meaning", "What achievement is Tessa proudest of?", "24bdb123-0"),
    _q("cc-ben", "person", "Which state is Tessa from?", "f40875bf-16"),
    _q("cc-ben", "meaning", "What did Tessa's social studies class preserve with salt?",
       "f40875bf-24"),
    _q("cc-ben", "person", "Which sports has Tessa tried besides volleyball?", "24bdb123-18"),
    _q("cc-ben", "event", "How much would BYU win if the bot keeps a conversation going?",
       "5a5500e8-12"),
    _q("cc-ben", "time", "Which exercises did I do in my lifting class on Wednesday?",
       "3e14f246-7", at="2018-05-12T18:00:00Z"),
    _q("cc-ben", "event", "Why do I wish I could slow time down?", "0ef3de7f-3"),
    # cc-ana: the person called Marcus, April 23 – May 17
    _q("cc-ana", "meaning", "Why doesn't Marcus have time for his hobbies?", "af058f8f-14"),
    _q("cc-ana", "meaning", "What happens to the weather after I clean my car?", "d84b3239-5"),
    _q("cc-ana", "event", "What business idea would I fund?", "eca83c2e-19"),
    _q("cc-ana", "person", "What would Marcus do if he could relive one day?", "5620ad20-0"),
    _q("cc-ana", "event", "What kind of dancing do I love?", "80374a8a-7"),
    _q("cc-ana", "person", "How did Marcus break bones rock climbing?", "407d66d8-6"),
    _q("cc-ana", "meaning", "Which dish takes Marcus back to his mission?", "f1476c66-4"),
    _q("cc-ana", "change", "Is Marcus still rock climbing these days?", "68e385ab-4",
       "6cf684fb-8"),
    _q("cc-ana", "event", "What did Marcus cook for his mom on Mother's Day?", "0ee0b590-7"),
    _q("cc-ana", "time", "What did Marcus tell me last Monday about the dinner he made?",
       "0ee0b590-7"),
    _q("cc-ana", "person", "Why couldn't Marcus spend Mother's Day with his mom before?",
       "8877b117-3"),
    _q("cc-ana", "person", "What is Marcus's fondest family memory?", "4a55c29b-8"),
    _q("cc-ana", "meaning", "Who in Marcus's family is only now learning to drive?",
       "3b589d38-2"),
    _q("cc-ana", "event", "What did I feed the ducklings?", "6108cc54-8"),
    _q("cc-ana", "event", "Which art school would I go to for grad school?", "9c6e3a53-6"),
    _q("cc-ana", "person", "Why did Marcus walk out of a movie?", "72bc21fb-4"),
    _q("cc-ana", "time", "What level did Marcus say he reached yesterday?", "12083713-8",
       at="2018-05-13T18:00:00Z"),
    _q("cc-ana", "person", "What did Marcus say about the Celtics?", "2c127f1d-20"),
    _q("cc-ana", "person", "What does Marcus wish about country music?", "53dc2ad2-4"),
    _q("cc-ana", "when", "When did Marcus almost cry playing Call of Duty?", "1e412422-9"),
]

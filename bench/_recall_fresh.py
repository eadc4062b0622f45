"""Fresh held-out questions about the real chats of bench/_chitchat.py (issue 16, item 4).

The 49 held-out questions of bench/_recall_questions.py had their misses read while the ranking
was tuned, so they no longer measure it honestly. These were written blind: by someone who had not
run the benchmark, any search, or read any ranking's output, from reading only the raw chats of
four pairs not used before (cc-eli, cc-fay, cc-gus, cc-hal in ``PAIRS``), and committed before any
ranking ran over them. They are pinned to the split ``fresh`` and must not be tuned on.

Conversations read, drawn at random::

    random.seed(2027)
    for user in ("cc-eli", "cc-fay", "cc-gus", "cc-hal"):
        picked[user] = random.sample([s for s in sessions() if s["user"] == user], 3)
    # then, per user in the same order, while the picks hold fewer than 60 turns:
    #     one more: random.sample(the user's other sessions, 1)

    cc-eli: a4b0f449, 8ff77e23, 270660ee
    cc-fay: 6da81036, 166ef84d, d8e00172
    cc-gus: f407ffed, 1f32e863, ed03b8af, 87393a28, 86689e99
    cc-hal: 4b4e73fd, 2739dff8, 6efe1206

Days are UTC days, as the sessions' timestamps are ("on Wednesday" is the UTC Wednesday before
the question's clock). Weekday questions use sessions held in daylight in the US, where the UTC
day and the speakers' own day agree; sessions late in the US evening (already the next day in
UTC) are asked about by date or by a count of days instead. Only the turns in the conversations
above were read: a turn in an unread conversation that also answers a question is not listed.
"""

from __future__ import annotations

from _recall_questions import LATE, Question


def _f(user: str, kind: str, text: str, *turns: str, at: str = LATE) -> Question:
    return Question(user, text, turns, kind, at, pinned="fresh")


FRESH = [
    # cc-eli: the person called Nora; read 2018-05-09 (a Wednesday, morning in the US), 05-11
    _f("cc-eli", "change", "Why did I move out of Helaman Halls?",
       "a4b0f449-29", "a4b0f449-31", "a4b0f449-33", "a4b0f449-37"),
    _f("cc-eli", "meaning", "What nice extras does my new place have?", "a4b0f449-37"),
    _f("cc-eli", "person", "Which coast does Nora live on?", "a4b0f449-13", "a4b0f449-14"),
    _f("cc-eli", "person", "Why was Nora up so late the night before?", "a4b0f449-22"),
    _f("cc-eli", "event", "Why did I skip breakfast?", "a4b0f449-27"),
    _f("cc-eli", "person", "How old is Nora?", "a4b0f449-36"),
    _f("cc-eli", "time", "How much sleep did I tell Nora I got on Wednesday?", "a4b0f449-21",
       at="2018-05-12T18:00:00Z"),
    _f("cc-eli", "event", "What's the craziest thing I've ever done?", "270660ee-3"),
    _f("cc-eli", "person", "What is the craziest thing Nora has done?", "270660ee-4"),
    _f("cc-eli", "meaning", "How did Nora hurt her hand as a kid?", "270660ee-12"),
    _f("cc-eli", "event", "Where did I break my ankle?", "270660ee-11"),
    _f("cc-eli", "event", "What happened when my friend tried a backflip off the high dive?",
       "270660ee-5"),
    _f("cc-eli", "person", "What did Nora think of Frankenstein?",
       "270660ee-40", "270660ee-42", "270660ee-46"),
    _f("cc-eli", "meaning", "Which novel did I say I keep finding new depth in?",
       "270660ee-39", "270660ee-41"),
    _f("cc-eli", "time",
       "What did Nora say last Wednesday about the hair colour of heroes in dystopian books?",
       "270660ee-30", "270660ee-32", at="2018-05-14T18:00:00Z"),
    _f("cc-eli", "when", "When did I tell Nora about breaking my ankle?", "270660ee-11"),
    _f("cc-eli", "when", "When did I tell Nora that I had just moved?", "a4b0f449-27",
       "a4b0f449-29"),
    # cc-fay: the person called Jonah; read 2018-04-23 (a Monday, daytime), 05-03 (a Thursday,
    # daytime) and 05-08 (UTC; the evening of May 7 in the US)
    _f("cc-fay", "event", "Which program am I declared in that starts next fall?",
       "6da81036-12"),
    _f("cc-fay", "person", "What is Jonah studying?", "6da81036-23", "6da81036-25"),
    _f("cc-fay", "meaning", "What draws Jonah to his chosen specialty?",
       "6da81036-29", "6da81036-31"),
    _f("cc-fay", "time", "What was I waiting for when Jonah and I chatted on Monday?",
       "6da81036-6", "6da81036-8", at="2018-04-26T18:00:00Z"),
    _f("cc-fay", "person", "What does Jonah do for fun instead of dancing?", "6da81036-53"),
    _f("cc-fay", "event", "Which dance class did I take this semester?", "6da81036-50"),
    _f("cc-fay", "meaning",
       "What style of moving to music does Jonah's girlfriend want to pick up?", "6da81036-49"),
    _f("cc-fay", "person", "What is Jonah's spirit animal, and why?", "166ef84d-37"),
    _f("cc-fay", "event", "Which animal did I pick as my spirit animal?",
       "166ef84d-40", "166ef84d-42"),
    _f("cc-fay", "meaning", "What wildlife warning did I spot driving on the West Coast?",
       "166ef84d-44", "166ef84d-46"),
    _f("cc-fay", "event", "Why do I suspect Adam is cheating in the chat challenge?",
       "166ef84d-58", "166ef84d-66", "166ef84d-68"),
    _f("cc-fay", "person", "What did Jonah tell me to do about Adam's suspicious chats?",
       "166ef84d-61"),
    _f("cc-fay", "time", "Why did Jonah need to get to bed early on May 8?", "166ef84d-77"),
    _f("cc-fay", "change", "Did Adam really stop chatting with me that night?", "166ef84d-70"),
    _f("cc-fay", "time", "What did I eat for lunch last Thursday?", "d8e00172-10",
       at="2018-05-08T18:00:00Z"),
    _f("cc-fay", "change", "Why did I end up making mac and cheese?", "d8e00172-10"),
    _f("cc-fay", "person", "Which dessert did Jonah say I must try?",
       "d8e00172-13", "d8e00172-19"),
    _f("cc-fay", "event", "Which culture fascinates me most, and why?",
       "d8e00172-36", "d8e00172-38"),
    _f("cc-fay", "meaning", "Which knack do I wish I had?", "d8e00172-44"),
    _f("cc-fay", "when", "When did Jonah recommend the Harry Potter quiz to me?",
       "d8e00172-3", "d8e00172-5", "d8e00172-7"),
    _f("cc-fay", "when", "When did I tell Jonah I had only one final left?", "6da81036-8"),
    # cc-gus: the person called Priya; read 2018-05-09 (UTC: 03:33, the US evening of May 8,
    # and 18:22, a Wednesday at midday in the US) and 05-10
    _f("cc-gus", "person", "Which food does Priya hate?",
       "87393a28-6", "87393a28-10", "87393a28-28"),
    _f("cc-gus", "event", "Why don't I like peanut butter?", "87393a28-5", "87393a28-27"),
    _f("cc-gus", "meaning", "Is there any way I do enjoy the spread my sister puts on everything?",
       "87393a28-27"),
    _f("cc-gus", "meaning", "What happened to my buddy who turned out to react badly to seeds?",
       "87393a28-31", "87393a28-33"),
    _f("cc-gus", "person", "How many brothers does Priya have?", "87393a28-36"),
    _f("cc-gus", "event", "Where was the world scout jamboree I went to?", "87393a28-41"),
    _f("cc-gus", "person", "What does Priya think about girls joining the Boy Scouts?",
       "87393a28-40"),
    _f("cc-gus", "meaning", "What made me uneasy at that big overseas youth gathering?",
       "87393a28-41"),
    _f("cc-gus", "time", "On May 9, what did Priya say about the Church and scouting?",
       "87393a28-34", "87393a28-36", "87393a28-38"),
    _f("cc-gus", "when", "When did I tell Priya I'm an Eagle Scout?", "87393a28-35"),
    _f("cc-gus", "when", "When did Priya and I joke about a planet made of peanut butter?",
       "87393a28-1", "87393a28-3", "87393a28-7", "87393a28-9"),
    _f("cc-gus", "time", "Which movie did I tell Priya about on Wednesday?", "86689e99-1",
       at="2018-05-14T18:00:00Z"),
    _f("cc-gus", "person", "What did Priya think of The Greatest Showman?", "86689e99-2"),
    _f("cc-gus", "meaning", "How does Priya manage to chat during lectures?", "86689e99-10"),
    _f("cc-gus", "person", "Why does Priya think the leader can chat all day?", "86689e99-8"),
    _f("cc-gus", "change", "Did Priya always keep up with her schoolwork?", "86689e99-14"),
    _f("cc-gus", "change", "Why did Priya give up on swipe typing?", "86689e99-26"),
    _f("cc-gus", "event", "Why do I think emojis matter?", "86689e99-29"),
    _f("cc-gus", "person", "Why did Priya say she had ended our previous chat?", "ed03b8af-3"),
    # cc-hal: the person called Lena; read 2018-05-02, 05-03 and 05-15 (UTC; all three late in
    # the US evening of the day before)
    _f("cc-hal", "event", "Which internship did I get?", "4b4e73fd-6", "4b4e73fd-8"),
    _f("cc-hal", "event", "What day does my internship start?", "4b4e73fd-10"),
    _f("cc-hal", "when", "When did I find out I got the internship?", "4b4e73fd-6"),
    _f("cc-hal", "person", "Where has Lena applied for part-time work?",
       "4b4e73fd-11", "4b4e73fd-13"),
    _f("cc-hal", "person", "What is Lena studying?", "4b4e73fd-14", "4b4e73fd-15"),
    _f("cc-hal", "meaning", "What was my secret for climbing the leaderboard?",
       "4b4e73fd-32", "4b4e73fd-34", "4b4e73fd-40"),
    _f("cc-hal", "event", "Why did the professor stop pairing me with my rival?",
       "4b4e73fd-30"),
    _f("cc-hal", "time", "What did I tell Lena on May 15 about who gets the headphones?",
       "4b4e73fd-64", "4b4e73fd-66", "4b4e73fd-76"),
    _f("cc-hal", "time", "How little had I slept, as I told Lena yesterday?",
       "4b4e73fd-24", "4b4e73fd-126", at="2018-05-16T18:00:00Z"),
    _f("cc-hal", "person", "Where did Lena grow up?", "4b4e73fd-105"),
    _f("cc-hal", "person", "Why did Lena's mom make her quit the dance team?",
       "4b4e73fd-109", "4b4e73fd-111"),
    _f("cc-hal", "meaning", "How did Lena hurt her foot as a kid?",
       "4b4e73fd-117", "4b4e73fd-119"),
    _f("cc-hal", "change", "Why was Lena's family cruise moved?", "4b4e73fd-121"),
    _f("cc-hal", "person", "What was Lena's first job?", "4b4e73fd-123"),
    _f("cc-hal", "meaning", "Which fighting discipline did Lena's mother commit the household to?",
       "4b4e73fd-113", "4b4e73fd-115"),
    _f("cc-hal", "person", "What did people call Lena because of her initials?", "4b4e73fd-88"),
    _f("cc-hal", "change", "Did Lena keep going for the headphones once she read the prize rules?",
       "4b4e73fd-77", "4b4e73fd-95", "4b4e73fd-97"),
    _f("cc-hal", "time", "What show did I tell Lena to look up two days ago?",
       "6efe1206-3", "6efe1206-5", "6efe1206-7", at="2018-05-05T18:00:00Z"),
    _f("cc-hal", "change", "Where did my internship application stand before I got the offer?",
       "6efe1206-25", "6efe1206-27"),
    _f("cc-hal", "when", "When did Lena first mention she might be getting a job?",
       "6efe1206-20"),
    _f("cc-hal", "when", "When did Lena ask me if I speak Spanish?", "2739dff8-2"),
    _f("cc-hal", "meaning", "How did Lena pass on her contact details without giving them away?",
       "4b4e73fd-45", "4b4e73fd-47"),
]

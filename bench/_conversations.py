"""Synthetic multi-session chat histories with questions whose answers lie in known turns.

Deterministic for a seed. Each user has sessions on everyday topics (assistant turns are long and
generic, as with real assistants); some user turns state personal facts in passing. A question
asks about one fact in different words than it was stated; facts that change later (a move, a
new job) are asked about as "now" and answered by the later session. Distractor sessions reuse
the same topics and vocabulary without the fact.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

NAMES = ["Maya", "Jonas", "Priya", "Tomás", "Aiko", "Lena", "Omar", "Grace", "Felix", "Nadia",
         "Ravi", "Sofia", "Ethan", "Chloe", "Mateo", "Zara", "Hugo", "Ingrid", "Kofi", "Elena"]
CITIES = ["Lisbon", "Denver", "Osaka", "Toronto", "Austin", "Dublin", "Seville", "Portland",
          "Melbourne", "Krakow", "Nairobi", "Valencia", "Seattle", "Edinburgh", "Montreal"]
BREEDS = ["beagle", "golden retriever", "border collie", "dachshund", "corgi", "greyhound",
          "labrador", "poodle", "shiba inu", "whippet"]
CARS = ["Honda Civic", "Subaru Outback", "Toyota Corolla", "Mazda 3", "Ford Focus", "Kia Niro",
        "VW Golf", "Tesla Model 3", "Volvo V60", "Hyundai Kona"]
INSTRUMENTS = ["cello", "ukulele", "piano", "violin", "drums", "saxophone", "banjo", "flute"]
DEGREES = ["Business Administration", "Mechanical Engineering", "Art History", "Nursing",
           "Computer Science", "Marine Biology", "Economics", "Philosophy", "Architecture"]
COMPANIES = ["Brightwave", "Northpeak", "Lumen Labs", "Cobalt Systems", "Greenfield Foods",
             "Atlas Freight", "Harbor Health", "Pinecone Studio", "Vertex Analytics"]
DISHES = ["mushroom risotto", "pad thai", "lentil soup", "shakshuka", "beef bourguignon",
          "vegetable lasagna", "chicken tikka masala", "paella", "ramen"]
SPORTS = ["half marathon", "triathlon", "10k race", "cycling sportive", "swim meet",
          "climbing competition"]
PLANTS = ["tomatoes", "basil", "zucchini", "strawberries", "peppers", "lavender", "kale"]
BOOKS = ["The Overstory", "Piranesi", "Project Hail Mary", "Circe", "The Road", "Dune",
         "Educated", "Klara and the Sun", "The Hobbit"]
APPS = ["Notion", "Todoist", "Obsidian", "Trello", "Evernote", "Things", "Asana"]
LANGS = ["Japanese", "Portuguese", "German", "Korean", "Italian", "Swahili", "Mandarin"]
WEEKDAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]


@dataclass(frozen=True)
class Fact:
    topic: str
    say: str          # user turn that states the fact
    ask: str          # a question about it, worded differently
    update: str | None = None  # a later statement that replaces it (knowledge update)
    ask_now: str | None = None


def _facts(r: random.Random) -> list[Fact]:
    name, city, city2 = r.choice(NAMES), r.choice(CITIES), r.choice(CITIES)
    company, company2 = r.sample(COMPANIES, 2)
    n = r.randint(2, 12)
    return [
        Fact("pets", f"We finally adopted a {r.choice(BREEDS)} puppy last weekend and named "
             f"him {name}; he chews everything.",
             "What did I name the puppy we adopted?"),
        Fact("cars", f"I ended up buying a used {r.choice(CARS)} with about {n}0,000 miles on "
             "it, mostly for the commute.",
             "Which car did I buy for commuting?"),
        Fact("music", f"I started taking {r.choice(INSTRUMENTS)} lessons on "
             f"{r.choice(WEEKDAYS)} evenings with a teacher called {r.choice(NAMES)}.",
             "What instrument am I learning to play?"),
        Fact("education", f"Back when I graduated with my degree in {r.choice(DEGREES)}, I "
             "never thought I'd end up doing this.",
             "What did I study at university?"),
        Fact("work", f"I just accepted an offer from {company} as a senior analyst; I start "
             "next month.",
             "Which company am I working for now?",
             update=f"Big news: I left {company} and joined {company2} as a team lead.",
             ask_now="Where do I work at the moment?"),
        Fact("home", f"We're renting a two-bedroom flat in {city}, close to the river.",
             "Which city do we live in now?",
             update=f"We moved! The new place is in {city2}, near my partner's office.",
             ask_now="Which city did we move to?"),
        Fact("cooking", f"My go-to dinner party dish is {r.choice(DISHES)}; I've made it "
             f"{n} times this year.",
             "What do I usually cook when friends come over for dinner?"),
        Fact("fitness", f"I signed up for the {r.choice(SPORTS)} in {r.choice(CITIES)} in "
             "October and I'm following a 12-week plan.",
             "Which race did I sign up for?"),
        Fact("garden", f"This year the raised beds are mostly {r.choice(PLANTS)} and a little "
             f"{r.choice(PLANTS)}; the slugs love them.",
             "What am I growing in the garden beds?"),
        Fact("books", f"Our book club is reading {r.choice(BOOKS)} this month and I'm hosting "
             "the discussion.",
             "Which book is the book club reading?"),
        Fact("productivity", f"I moved all my to-do lists into {r.choice(APPS)} and set up a "
             "weekly review on Sundays.",
             "Which app do I use for my tasks?"),
        Fact("languages", f"I'm practicing {r.choice(LANGS)} with a tutor twice a week before "
             "the trip next spring.",
             "What language am I practicing with my tutor?"),
        Fact("family", f"My sister {r.choice(NAMES)} is getting married on the "
             f"{r.randint(2, 28)}th of June and I'm the maid of honor.",
             "When is my sister's wedding?"),
        Fact("health", f"The physio said my knee pain comes from a weak IT band, so I do "
             f"{n} minutes of exercises every morning.",
             "What did the physiotherapist say about my knee?"),
        Fact("finance", f"I'm putting {n}00 dollars a month into an index fund for the house "
             "deposit.",
             "How much am I saving each month for the deposit?"),
        Fact("travel", f"For the anniversary we booked a cabin near {r.choice(CITIES)} for "
             f"{n % 5 + 2} nights.",
             "Where is the cabin we booked for our anniversary?"),
        Fact("tech", f"My laptop keeps throwing error 0x{r.randint(4096, 65535):X} when it "
             "wakes from sleep.",
             "What error code does my laptop show after sleep?"),
        Fact("coffee", f"I switched to a {r.choice(['V60', 'AeroPress', 'Chemex', 'moka pot'])} "
             "for my coffee and grind the beans fresh every morning.",
             "How do I brew my coffee these days?"),
    ]


TOPIC_TALK = {
    "pets": ["training tips for dogs", "how often to walk a dog", "puppy vaccination schedule",
             "choosing dog food", "crate training at night"],
    "cars": ["car insurance quotes", "how to check tire pressure", "electric versus hybrid",
             "maintenance schedule for a car", "parking permits in the city"],
    "music": ["practicing scales", "finding a music teacher", "buying a second-hand instrument",
              "reading sheet music", "joining a community orchestra"],
    "education": ["online courses for data skills", "whether a master's degree pays off",
                  "writing a good cover letter", "student loan repayment"],
    "work": ["preparing for a performance review", "negotiating a salary", "managing meetings",
             "onboarding at a new job", "asking for remote work"],
    "home": ["renting versus buying", "decorating a small flat", "dealing with a landlord",
             "moving boxes and packing", "home insurance"],
    "cooking": ["meal prep for the week", "how to make stock", "knife skills",
                "hosting a dinner party", "vegetarian protein sources"],
    "fitness": ["a beginner running plan", "stretching after a run", "strength training",
                "choosing running shoes", "recovery days"],
    "garden": ["companion planting", "dealing with slugs", "watering schedule in summer",
               "composting kitchen scraps", "building raised beds"],
    "books": ["books like the last one I read", "starting a book club", "audiobooks for walks",
              "reading more in the evening"],
    "productivity": ["time blocking", "inbox zero", "avoiding procrastination",
                     "a weekly planning routine", "note-taking systems"],
    "languages": ["spaced repetition flashcards", "language exchange partners",
                  "grammar versus vocabulary", "podcasts for learners"],
    "family": ["planning a wedding gift", "writing a toast", "family holiday logistics",
               "a birthday party for a niece"],
    "health": ["sleep hygiene", "knee pain when running", "drinking enough water",
               "booking a physiotherapist", "stretching routines"],
    "finance": ["a monthly budget", "index funds versus savings accounts", "paying off debt",
                "saving for a house deposit", "tax returns"],
    "travel": ["packing light", "cheap flights", "a weekend itinerary", "travel insurance",
               "cabins and cottages for a getaway"],
    "tech": ["a laptop that runs hot", "backing up photos", "resetting a router",
             "choosing a password manager", "updating drivers"],
    "coffee": ["grinding coffee beans", "espresso machines", "cold brew at home",
               "choosing coffee beans"],
}

FILLER_USER = [
    "Can you give me some advice on {t}?", "I've been thinking about {t} lately.",
    "What's the best way to approach {t}?", "Any tips on {t} for a beginner?",
    "Thanks, that helps. What else should I know about {t}?", "Okay, and how long does that take?",
    "Makes sense. Could you make it a short checklist?", "Great, let's go with that.",
]
ASSISTANT = [
    "Here are a few ideas about {t}. First, start small and be consistent; most people see "
    "progress within a few weeks. Second, keep notes so you can see what works for you.",
    "Good question. When it comes to {t}, the key is to plan ahead, set a realistic budget of "
    "time and money, and review how it's going every couple of weeks.",
    "Sure! A simple checklist for {t}: 1) decide what success looks like, 2) gather what you "
    "need, 3) schedule it in your calendar, 4) ask for help if you get stuck.",
    "That sounds like a great plan. Many people find that {t} gets easier once it becomes part "
    "of a routine. Let me know if you want me to break it down further.",
    "It depends on your situation, but generally for {t} I'd recommend comparing a few options, "
    "reading recent reviews, and starting with the simplest one.",
]


@dataclass
class Question:
    user: str
    text: str
    session_id: str
    turn_id: str
    kind: str  # single | update


@dataclass
class UserHistory:
    user: str
    sessions: list[dict] = field(default_factory=list)
    questions: list[Question] = field(default_factory=list)


def _session(r: random.Random, user: str, sid: str, start: float, topic: str,
             facts: list[tuple[str, str]]) -> dict:
    """A session on ``topic``; ``facts`` are (turn id, text) user turns placed inside it."""
    talk = TOPIC_TALK[topic]
    turns = r.randint(4, 8)
    slots = sorted(r.sample(range(turns), min(len(facts), turns)))
    messages = []
    at = start
    fact_iter = iter(facts)
    for i in range(turns):
        t = r.choice(talk)
        if i in slots:
            turn_id, text = next(fact_iter)
            follow = r.choice(FILLER_USER).format(t=t)
            user_text = f"{text} Anyway, {follow[0].lower()}{follow[1:]}"
        else:
            turn_id, user_text = f"{sid}-u{i}", r.choice(FILLER_USER).format(t=t)
        at += r.randint(20, 300)
        messages.append({"role": "user", "content": user_text, "id": turn_id,
                         "timestamp": at})
        at += r.randint(5, 30)
        reply = " ".join(r.sample(ASSISTANT, 2)).format(t=t)
        messages.append({"role": "assistant", "content": reply, "id": f"{sid}-a{i}",
                         "timestamp": at})
    return {"user": user, "session_id": sid, "started_at": start, "messages": messages}


def generate(users: int = 20, sessions: int = 20, seed: int = 7) -> list[UserHistory]:
    r = random.Random(seed)
    out = []
    for u in range(users):
        user = f"bench-user-{u:03d}"
        history = UserHistory(user)
        facts = _facts(r)
        r.shuffle(facts)
        chosen = facts[: max(1, sessions // 2)]
        start = 1_700_000_000.0 + u * 3600
        plan: list[tuple[str, list[tuple[Fact, str]]]] = []
        for _ in range(sessions):
            plan.append((r.choice(list(TOPIC_TALK)), []))
        for fact in chosen:
            s = r.randrange(0, max(1, sessions - 3))
            plan[s] = (fact.topic, plan[s][1] + [(fact, "say")])
            if fact.update:
                later = r.randrange(s + 1, sessions)
                plan[later] = (fact.topic, plan[later][1] + [(fact, "update")])
        for s, (topic, placed) in enumerate(plan):
            sid = f"{user}-s{s:02d}"
            at = start + s * 86400 * 3
            turns = []
            for k, (fact, which) in enumerate(placed):
                turn_id = f"{sid}-f{k}"
                turns.append((turn_id, fact.say if which == "say" else fact.update or ""))
                if which == "say":
                    history.questions.append(Question(user, fact.ask, sid, turn_id, "single"))
                else:
                    history.questions.append(
                        Question(user, fact.ask_now or fact.ask, sid, turn_id, "update"))
            history.sessions.append(_session(r, user, sid, at, topic, turns))
        # an update question supersedes the original one for the same fact
        updated = {q.text for q in history.questions if q.kind == "update"}
        history.questions = [q for q in history.questions
                             if q.kind == "update" or not any(
                                 f.ask == q.text and f.ask_now in updated for f in chosen)]
        out.append(history)
    return out

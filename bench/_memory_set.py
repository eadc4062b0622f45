"""A small hand-written long-term-memory set, in the style of public benchmarks (LongMemEval,
LoCoMo) and unlike bench/_conversations.py: people ask an assistant for help with concrete tasks
and mention facts about their lives in passing; questions come later, worded the way one would
ask, and often share no word with the turn that answers them. Some answers were said by the
assistant, some facts change later (the question asks about "now": the later turn answers it).

It was written once and is not used to choose any weight in core/search: it is a check, not a
training set. The filler exchanges are hand-written too and placed by a seeded RNG.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

# (user turn, assistant turn): help with tasks, nothing personal worth remembering
FILLER = [
    ("Can you rewrite this sentence to sound less passive-aggressive: 'As per my last email, "
     "the report is still missing.'", "Sure: 'Just following up on the report — could you let "
     "me know when you expect to have it ready? Happy to help if anything is blocking it.'"),
    ("How long should I boil eggs for a jammy yolk?", "About six and a half minutes from "
     "boiling water, then straight into an ice bath for a couple of minutes so the yolk stays "
     "soft and the white sets."),
    ("What's the difference between a Roth IRA and a traditional one?", "Contributions to a "
     "traditional IRA are usually tax-deductible now and taxed on withdrawal; Roth "
     "contributions are made after tax and qualified withdrawals are tax-free later."),
    ("Give me a regex that matches a US zip code with the optional four-digit suffix.",
     r"Try ^\d{5}(-\d{4})?$ — five digits, optionally followed by a hyphen and four more."),
    ("Any tips for getting a toddler to sleep on a long flight?", "Keep the bedtime routine "
     "as familiar as you can: pyjamas, a favourite blanket, the same book. Book a night "
     "flight if possible and bring snacks for take-off and landing to help with ear pressure."),
    ("Summarise the causes of the French Revolution in three bullet points.", "1) A fiscal "
     "crisis from war debts and an unfair tax system; 2) Enlightenment ideas challenging "
     "absolute monarchy; 3) Bread shortages and rising prices that angered ordinary people."),
    ("How do I stop my git pull from creating merge commits?", "Set pull to rebase by "
     "default with `git config --global pull.rebase true`, or use `git pull --ff-only` if you "
     "only want fast-forwards and prefer an error to a surprise merge."),
    ("What's a polite way to decline a wedding invitation?", "Thank them warmly, say you "
     "are sorry you can't attend without over-explaining, and send your best wishes — a card "
     "or small gift from the registry is a kind touch."),
    ("Convert 350 degrees Fahrenheit to Celsius.", "350°F is about 177°C; most recipes "
     "round that to 180°C, or 160°C in a fan oven."),
    ("Which houseplants are safe around cats?", "Spider plants, Boston ferns, calatheas, "
     "parlour palms and most orchids are considered non-toxic to cats. Avoid lilies "
     "entirely — even the pollen is dangerous."),
    ("Draft a short out-of-office message for next week.", "'Thanks for your message. I'm "
     "out of the office until Monday the 14th with limited access to email. For anything "
     "urgent, please contact Sam at sam@example.com.'"),
    ("Why does my sourdough come out flat?", "Usually an under-active starter or "
     "over-proofing. Feed the starter until it reliably doubles in 4–6 hours, and try a "
     "shorter bulk ferment or a cooler kitchen."),
    ("Explain what a Docker volume is like I'm five.", "A container is like a sandcastle "
     "that gets washed away when you stop playing; a volume is a bucket next to it where you "
     "keep the things you want to find again next time."),
    ("What should I look for when buying a used bike?", "Check the frame for cracks or "
     "dents, spin the wheels to see they're true, test the brakes and shifting, and look at "
     "chain wear. Ask for the service history if there is one."),
    ("Can you suggest a stretching routine for tight hips?", "Try a 10-minute sequence: "
     "90/90 hip switches, pigeon pose, a deep lunge with a twist, butterfly stretch and "
     "happy baby. Hold each for 45–60 seconds and breathe slowly."),
    ("How do I politely ask my neighbour to turn their music down?", "Pick a calm moment, "
     "keep it friendly and specific: 'Hi! The music carries into our bedroom after ten — "
     "would you mind turning it down in the evenings?' Most people are happy to help."),
    ("What's the best way to store fresh herbs?", "Treat soft herbs like basil and parsley "
     "like flowers: stems in a glass of water. Wrap woody herbs like thyme and rosemary in a "
     "damp paper towel and keep them in the fridge."),
    ("Write a haiku about Monday mornings.", "Alarm sings too soon / coffee steams a grey "
     "window / inbox wakes with me"),
    ("How much should I tip for a haircut?", "In the US, 15–20% is the usual range; a "
     "little more if the stylist squeezed you in or did something complex."),
    ("What does 'idempotent' mean in an API?", "Calling it once or many times has the same "
     "effect: repeating a PUT or DELETE with the same input leaves the server in the same "
     "state, which makes retries safe."),
    ("Suggest a board game for four adults who like strategy.", "Terraforming Mars, "
     "Brass: Birmingham or Cascadia if you want something lighter. All play well with four."),
    ("How do I get red wine out of a carpet?", "Blot (don't rub), then dab with a mix of "
     "dish soap, white vinegar and warm water. Rinse with cold water and blot dry; repeat "
     "if needed."),
    ("Recommend a podcast about history.", "Try 'The Rest Is History' for lively "
     "conversations, or 'Hardcore History' if you like very long deep dives."),
    ("What's a good warm-up before lifting weights?", "Five minutes of light cardio, then "
     "dynamic moves like leg swings, arm circles and bodyweight squats, and a couple of "
     "light sets of your first lift."),
    ("Can you check my cover letter opening: 'I am writing to apply for the job.'",
     "It's fine but flat. Lead with something specific: 'Your team's work on accessible "
     "transit maps is why I'm applying for the product designer role.'"),
    ("What's the capital of Australia?", "Canberra — a planned city chosen as a compromise "
     "between Sydney and Melbourne."),
    ("How do I make cold brew at home?", "Coarsely grind about 100 g of coffee, stir into a "
     "litre of cold water, steep 12–18 hours in the fridge, then strain through a paper "
     "filter. Dilute to taste."),
    ("Help me name a spreadsheet that tracks household chores.", "How about 'Chore Wars', "
     "'Who Did The Dishes' or simply 'Household Rota 2024'."),
    ("What are some signs of burnout?", "Persistent exhaustion, cynicism about work, "
     "feeling ineffective, trouble sleeping and getting sick more often. If it lasts, talk "
     "to a doctor and your manager about workload."),
    ("How do I clean a cast iron pan?", "Rinse with hot water and a brush while it's warm, "
     "dry it fully on the stove, then wipe a thin film of oil on it. A little soap now and "
     "then is fine."),
    ("Explain compound interest with an example.", "If you invest 1,000 at 5% a year, after "
     "one year you have 1,050; the next year you earn 5% on 1,050, not 1,000, so growth "
     "speeds up over time."),
    ("Give me three dinner ideas with chickpeas.", "Chana masala, crispy roasted chickpea "
     "bowls with tahini, or a chickpea and spinach stew with smoked paprika."),
    ("What's the etiquette for replying-all at work?", "Reply-all only when everyone on the "
     "thread needs your answer; otherwise reply to the sender and move others to BCC if you "
     "are taking them off the thread."),
    ("How can I make my Wi-Fi faster upstairs?", "Move the router somewhere central and "
     "high, switch to a less crowded channel, or add a mesh node or powerline adapter on the "
     "upper floor."),
    ("Recommend a beginner-friendly hike near a city.", "Look for loop trails under 8 km "
     "with less than 300 m of climbing; local park services usually mark these as easy."),
    ("How do I write a good commit message?", "A short imperative summary under 50 "
     "characters, a blank line, then why the change was needed and anything surprising."),
]


@dataclass(frozen=True)
class Item:
    kind: str          # user | assistant | update
    say: str           # the turn that holds the answer (the later one for updates)
    reply: str         # the other side of that exchange
    question: str
    before: str | None = None  # update: the earlier statement, in an earlier session


USERS: dict[str, list[Item]] = {
    "hw-ana": [
        Item("user", "Could you help me plan cheap meals for next week? Money is tight since I "
             "just started my residency at the children's hospital and the shifts are brutal.",
             "Of course — batch-cook a big pot of lentil soup and a tray of roasted vegetables "
             "on your day off, and keep eggs and frozen dumplings for the late nights.",
             "Where am I doing my medical training?"),
        Item("user", "I need a better name for our sourdough starter. My roommate already "
             "calls it Doughlores but I'm open to alternatives.",
             "Doughlores is hard to beat! Other options: Clint Yeastwood, Bread Pitt or "
             "Jabba the Crust.", "What is the bread starter in our flat called?"),
        Item("user", "My brother Mateo's flight lands at 6:40 on Friday evening; what should "
             "I keep in the car for his little one?", "A clean car seat checked for the "
             "child's weight, wipes, water, a snack and a small toy or book for the drive.",
             "What time is my brother's plane getting in?"),
        Item("user", "I keep killing my fiddle leaf fig — it drops leaves by the north-facing "
             "window no matter what I do.", "Fiddle leaf figs want bright, indirect light; a "
             "north window is often too dim. Move it closer to an east or south window and "
             "water only when the top few centimetres are dry.",
             "Which houseplant have I been struggling to keep alive?"),
        Item("user", "For context, I run about 25 kilometres a week, mostly along the canal "
             "before sunrise. Which headlamp would you get?", "Look for 300–400 lumens, a "
             "red-light mode and a rechargeable battery; a snug strap matters more than "
             "brightness for running.", "How much distance do I cover jogging each week?"),
        Item("assistant", "What's a fair way to split rent with my partner when we earn "
             "different amounts?", "A common approach is proportional splitting: each of you "
             "pays a share of the rent equal to your share of your combined income, so if you "
             "earn 60% of the total you cover 60% of the rent.",
             "What approach did you suggest for dividing housing costs with my partner?"),
        Item("user", "I'm allergic to shellfish, so please swap out the prawns in this paella "
             "recipe.", "Use chicken thighs and chorizo instead, or go vegetarian with "
             "artichokes and peppers; keep the saffron and smoked paprika.",
             "What can't I eat because of an allergy?"),
        Item("update", "I sold the Fiat last week and bought an e-bike — getting to the "
             "hospital is so much nicer now.", "Congratulations! Get a solid D-lock and "
             "register the frame number in case it's ever stolen.",
             "How do I get to work these days?",
             before="I drive a little red Fiat 500 to work; how often should I check the "
             "tyre pressure?"),
        Item("user", "My grandmother turns ninety on the 3rd of March and we're throwing her "
             "a garden party — any ideas for decorations?", "String lights, jam jars of "
             "spring flowers on each table and a photo line of pictures from each decade of "
             "her life would be lovely.", "How old will my gran be at her next birthday?"),
        Item("user", "I finally finished the 1000-piece puzzle of the Lisbon tram; it took me "
             "three weekends. How do I frame it?", "Slide parchment under it, brush on "
             "puzzle glue in two thin coats, let it cure overnight and mount it on foam board "
             "before framing.", "What did the jigsaw I completed show?"),
    ],
    "hw-ben": [
        Item("user", "Our team moved the billing service from Heroku to Fly.io last sprint "
             "and the cold starts got worse. Any ideas?", "Keep at least one machine "
             "running with min_machines_running, and check whether the image is large or the "
             "app does heavy work at import.",
             "Which hosting platform did we move the payments backend to?"),
        Item("user", "I'm on call every fourth week and this week is mine, so keep answers "
             "short please.", "Understood — short answers it is. Good luck with the pager.",
             "How often do I have on-call duty?"),
        Item("user", "I got a Jarvis standing desk after my lower back started hurting. "
             "What height should it be?", "Set it so your elbows rest at about 90 degrees "
             "with relaxed shoulders, and the top of the monitor at or just below eye level.",
             "What furniture did I buy because of my back?"),
        Item("user", "The bug turned out to be a timezone issue: the job fired at midnight "
             "UTC, which is 7pm for us in Chicago.", "Classic. Store schedules with an "
             "explicit timezone and convert at the edge; cron libraries usually accept a TZ.",
             "What caused the scheduled job to run at the wrong time?"),
        Item("user", "I adopted two rescue cats, Miso and Tofu, and they're terrified of the "
             "vacuum. How do I help them?", "Run it in another room first with treats "
             "nearby, keep a hiding spot available and build up gradually over a few weeks.",
             "What are my pets called?"),
        Item("assistant", "Suggest a name for our internal command-line tool that spins up "
             "preview environments.", "How about 'Skiff'? It's short, easy to type, and a "
             "skiff is a small fast boat that carries things across — like your previews.",
             "What name did you propose for the preview deployment tool?"),
        Item("user", "I'm brewing beer at home now; my first batch was a hazy IPA that came "
             "out far too bitter.", "Try a shorter bittering addition and move more hops to "
             "the whirlpool and dry hop; hazy styles should be soft rather than sharp.",
             "What kind of homebrew did I make first?"),
        Item("update", "I gave up and switched to VS Code — the remote containers support "
             "won me over.", "Fair enough; the Vim extension keeps most of your muscle "
             "memory if you miss modal editing.", "Which code editor am I using now?",
             before="I'm using Neovim with a pretty minimal config; how do I add a fuzzy "
             "file finder?"),
        Item("user", "My partner and I are expecting a baby girl in September, so I'm "
             "planning parental leave.", "Congratulations! Check your company's policy "
             "early and agree a hand-over plan with your manager a couple of months ahead.",
             "When is our child due?"),
        Item("user", "Quick context: I play bass in a garage band called The Late Merges "
             "and we rehearse on Thursdays. Is a 4x10 cab overkill?", "For a garage, a "
             "2x10 or 1x15 is usually plenty; a 4x10 is for bigger rooms and outdoor gigs.",
             "Which instrument do I play in my band?"),
    ],
    "hw-chen": [
        Item("user", "I teach chemistry to eleventh graders at a public school in "
             "Sacramento; can you help me plan a lab on reaction rates?", "Sure: have groups "
             "time how long an antacid tablet takes to dissolve in water at three "
             "temperatures, then graph rate against temperature.",
             "What subject and grade level do I teach?"),
        Item("user", "I'm number 14 on the waiting list for a community garden plot. What "
             "can I grow on a balcony meanwhile?", "Herbs, cherry tomatoes, chillies and "
             "salad leaves all do well in pots with six hours of sun.",
             "What's my position in the queue for the allotment?"),
        Item("user", "I volunteer at the animal shelter every other Saturday, mostly walking "
             "the big dogs. What shoes would you recommend?", "Trail runners with a grippy "
             "sole are ideal; dogs pull, and shelter yards get muddy.",
             "What do I do on some weekends to help out?"),
        Item("user", "Since my knee surgery in January I've been swimming laps instead of "
             "hiking. How do I improve my freestyle breathing?", "Exhale steadily underwater "
             "so you only need to inhale when you turn, and practise breathing every three "
             "strokes to balance both sides.",
             "Why did I switch from trails to the pool?"),
        Item("user", "My daughter Lily just got accepted to a robotics summer camp at UC "
             "Davis! What should she pack?", "Comfortable clothes, a labelled water bottle, "
             "a notebook, and a laptop if the camp asks for one.",
             "What summer program did my kid get into?"),
        Item("assistant", "Give me an icebreaker for the first day of class.", "Try 'Two "
             "Truths and a Lab': each student shares two true facts about themselves and one "
             "invented lab accident, and the class guesses which is the fake.",
             "What first-day activity did you recommend for my students?"),
        Item("user", "I collect vintage fountain pens — my favourite is a 1950s Parker 51 in "
             "burgundy. Which ink is safe for it?", "Stick to well-behaved inks such as "
             "Waterman or Pelikan 4001; avoid highly saturated or iron gall inks.",
             "What's the prize of my writing instrument collection?"),
        Item("update", "We returned the Odyssey at the end of the lease and bought a used "
             "Prius instead.", "Sensible choice — hybrids are cheap to run; check the "
             "hybrid battery's health report before the warranty ends.",
             "What car does our family drive now?",
             before="We're leasing a Honda Odyssey minivan; is it worth buying it out at the "
             "end of the lease?"),
        Item("user", "I've been reading a chapter of Middlemarch every night before bed. Is "
             "there a good companion guide?", "Rebecca Mead's 'My Life in Middlemarch' is a "
             "lovely companion, part memoir and part close reading.",
             "Which novel is part of my bedtime routine?"),
        Item("user", "My sister lives in Auckland, so our calls have to be at 2pm my time. "
             "How do I set up a recurring reminder?", "Create a recurring calendar event "
             "with both time zones shown, and add a reminder 15 minutes before.",
             "In which city does my sibling live?"),
    ],
    "hw-dev": [
        Item("user", "I'm a freelance illustrator, mostly children's picture books. How do I "
             "write a better portfolio bio?", "Open with what you make and for whom, name "
             "one or two books or clients, and end with how to reach you.",
             "What do I do for a living?"),
        Item("user", "My studio is a converted garage behind the house and it gets freezing "
             "in winter. Oil radiator or infrared panel?", "For a draughty garage, an "
             "infrared panel warms you directly; an oil radiator is better once the space is "
             "insulated.", "Where do I do my work?"),
        Item("user", "I charge 45 euros an hour for commercial work but less for nonprofits. "
             "Is that too low?", "For experienced illustrators in Europe, 45 is on the low "
             "side for commercial clients; consider quoting per project with usage rights "
             "priced separately.", "What's my rate for business clients?"),
        Item("user", "I'm cutting down on caffeine and I'm down to one flat white a day. Any "
             "tips for the afternoon slump?", "A short walk outside, a glass of water and a "
             "protein snack often help more than people expect.",
             "How much coffee do I drink now?"),
        Item("user", "We went to Kyoto in April and the cherry blossoms were already "
             "falling. Where should we go next spring?", "Further north: Hirosaki or "
             "Kakunodate bloom later, usually late April to early May.",
             "When did I visit Japan?"),
        Item("assistant", "What's a good way to keep track of invoices?", "Keep a simple "
             "spreadsheet with client, invoice number, date sent, due date and paid date, or "
             "use a free tool like Wave that sends reminders for overdue payments.",
             "What did you say I should use to keep track of unpaid bills from clients?"),
        Item("user", "My left wrist has been aching and the doctor thinks it's tendinitis "
             "from the tablet pen. Any ergonomic tips?", "Use a larger-grip pen, raise the "
             "tablet so your wrist stays neutral, and take a short break every 30 minutes.",
             "What's wrong with my hand?"),
        Item("update", "I parted ways with Priya and signed with Tom Okafor at Greenhouse "
             "Agency.", "Congratulations on the new representation! Send Tom an updated "
             "portfolio and your list of current projects.", "Who represents me now?",
             before="My agent is Priya Raman at Bluebird Literary; should I ask her about "
             "foreign rights?"),
        Item("user", "I'm learning Dutch on Duolingo because we might move to Utrecht next "
             "year. Is that enough?", "It's a good start for vocabulary; add a weekly "
             "conversation class or a tutor for speaking practice.",
             "Which language am I studying and why?"),
        Item("user", "The mural I painted for the Oak Street library took eleven days. How "
             "should I photograph it for my portfolio?", "Shoot on an overcast day, "
             "square-on with a tripod, and include one wide shot with people for scale.",
             "How long did the public painting take me?"),
    ],
}


STALE_REPLY = ("Good question — it depends on how you use it; the manual and a specialist "
               "can tell you more than I can.")


@dataclass(frozen=True)
class Question:
    user: str
    text: str
    session_id: str
    turn_id: str
    kind: str


def _exchanges(r: random.Random, count: int) -> list[tuple[str, str]]:
    return r.sample(FILLER, count)


def build(seed: int = 3) -> tuple[list[dict], list[Question]]:
    """Sessions (import lines) and questions: per user, one session per fact (two for an
    update), three sessions with no fact, 3–6 exchanges each, two days apart."""
    r = random.Random(seed)
    sessions: list[dict] = []
    questions: list[Question] = []
    for u, (user, items) in enumerate(USERS.items()):
        plan: list[tuple[Item | None, str]] = [(item, "say") for item in items]
        plan += [(None, "filler")] * 3
        r.shuffle(plan)
        for updated in [i for i in items if i.before]:
            say_at = plan.index((updated, "say"))
            plan.insert(r.randrange(0, say_at + 1), (updated, "before"))
        start = 1_710_000_000.0 + u * 3600
        for s, (item, role) in enumerate(plan):
            sid = f"{user}-s{s:02d}"
            turns = _exchanges(r, r.randint(2, 5))
            slot = r.randrange(0, len(turns) + 1)
            if item is not None:
                said = item.before if role == "before" else item.say
                answer = STALE_REPLY if role == "before" else item.reply
                turns.insert(slot, (said or "", answer))
            messages = []
            at = start + s * 2 * 86400
            for i, (said, answer) in enumerate(turns):
                at += r.randint(30, 400)
                messages.append({"role": "user", "content": said, "id": f"{sid}-u{i}",
                                 "timestamp": at})
                at += r.randint(5, 40)
                messages.append({"role": "assistant", "content": answer, "id": f"{sid}-a{i}",
                                 "timestamp": at})
            sessions.append({"user": user, "session_id": sid, "started_at": start + s * 2 *
                             86400, "messages": messages})
            if item is not None and role == "say":
                side = "a" if item.kind == "assistant" else "u"
                questions.append(Question(user, item.question, sid, f"{sid}-{side}{slot}",
                                          item.kind))
    return sessions, questions

"""Concepts for skill ranking: groups of words people use for the same thing ("photos",
"pictures", "images"). Each word also counts as its group's concept (named after the line's
first word; lines with the same first word form one group), in skill texts and in messages
alike, so a request can find a skill that says it differently. A general vocabulary for the
tasks people bring to an assistant; a word may belong to several groups."""

from __future__ import annotations

from functools import lru_cache

from core.skills.terms import stem

GROUPS = """
image photo picture pic pics screenshot jpeg jpg png heic thumbnail
video clip footage movie recording mp4 mov film
audio sound voice podcast recording mp3 speech
record recording transcript transcribe transcription dictation
shrink compress small smaller reduce downsize resize shrinking squeeze slim
big large huge heavy bloated gigabytes gb mb
disk storage space partition drive volume gigabytes
full filling fills eating reclaim free cleanup prune
delete remove purge clean wipe erase prune
old stale leftover unused obsolete outdated dangling
server vps box host machine instance droplet node
computer laptop pc macbook desktop workstation
phone mobile iphone android smartphone
website site webpage page homepage portal url
web internet online browser
down offline unreachable outage unavailable dead unresponsive
slow sluggish lag latency crawling timeout performance fast speed
error exception failure crash bug broke broken failing fails failed traceback regression
debug troubleshoot diagnose investigate figure fix
log logs logging journal syslog
restart reboot crash respawn supervise
start boot startup launch
schedule scheduled recurring periodic cron daily weekly nightly hourly every routine
remind reminder reminders nudge
alert notify notification ping alarm warn heads-up
watch monitor track keep check poll observe
price prices cost costs fare fares cheap cheaper expensive pricing discount
money finance finances cash spending spend expense expenses budget savings save
bill billing invoice invoices charge charges charged payment pay
bank card statement transactions
buy purchase shop shopping order orders checkout
flight flights airfare airfares plane ticket tickets airline
travel trip trips holiday vacation journey itinerary route visit
email mail emails inbox gmail outlook message reply
message messages chat chatting text dm
meeting meetings call calls sync standup invite appointment
calendar schedule agenda slot availability
time timezone timezones zone clock hour
task tasks todo to-do chores backlog priorities prioritise prioritize
task overwhelm overwhelmed swamped drowning
habit habits routine streak goal goals consistency
write writing draft compose wording phrasing
letter note memo message
document doc docs documents file files paper report manual
pdf pdfs
spreadsheet sheet sheets excel xlsx csv table tables column columns cell cells workbook
spreadsheet tab tabs lookup vlookup formula formulas
chart graph plot plots visualise visualize diagram
data dataset datasets records rows numbers figures stats statistics analytics
analyse analyze analysis insight insights crunch
summary summarise summarize gist tldr tl;dr recap digest roundup brief briefing overview
news headlines world current events
article articles post blog paper essay story
translate translation language languages localise localize german spanish french japanese
grammar spelling typos mistakes proofread polish edit editing
resume cv curriculum
job jobs career position role hiring application applications applying apply vacancy
recipe recipes cook cooking meal meals dinner dinners lunch food grocery groceries
weather forecast rain umbrella temperature sunny
learn learning study studying practice quiz flashcards vocabulary lesson
homework exercise school student teach tutor explain
photo album albums gallery collection
duplicate duplicates dupes copies twin same
backup backups back copy restore snapshot archive
database db databases sql postgres postgresql mysql mariadb sqlite mongo mongodb redis
query queries select join joins
table schema column migration migrations
slow-query index indexes indexing explain
cache caching cached memoize
api apis endpoint endpoints rest sdk client webhook
secret secrets key keys token tokens password passwords credential credentials apikey
leak leaked exposed pushed committed public
security secure protect protection harden hardening lock safe
attack attacks brute bots hammering intrusion malicious
firewall port ports ufw iptables
encrypt encryption encrypted gpg age password-protect
login log-in signin sign-in authenticate authentication auth 2fa mfa totp
vulnerable vulnerability vulnerabilities cve cves advisory audit
ssh sshd keypair publickey
git github gitlab repo repos repository repositories commit commits branch branches
pull-request pr prs merge review
release releases version versions tag tags changelog ship shipping
test tests testing unittest pytest spec coverage
ci pipeline pipelines workflow workflows actions runner build builds
deploy deploying deployment deployments release rollout ship production prod
rollback revert undo previous
container containers docker image images compose dockerfile
kubernetes k8s kubectl pod pods cluster helm
cloud aws amazon gcp azure s3 bucket buckets
domain domains dns record records nameserver subdomain
certificate certificates cert certs ssl tls https padlock letsencrypt
proxy reverse-proxy nginx apache caddy
network networking wifi wi-fi router internet connection modem
python pip venv virtualenv package packages library libraries dependency dependencies module modules
javascript node npm typescript react js
script scripts bash shell command commands terminal cli
regex regexp pattern patterns match extract
scrape scraping crawl crawler harvest collect grab
automate automation automatic automatically bot
form forms fill click browser playwright selenium
json jq yaml
slack workspace channel channels
telegram botfather
discord server guild
rss feed feeds atom subscription blogs
notebook notebooks jupyter ipynb kernel
model models llm ai gpt claude llama ollama
prompt prompts instruction instructions
fine-tune finetune fine-tuning training train dataset
embedding embeddings semantic vector vectors similarity meaning
token tokens cost costs budget spend
invest investments investing portfolio stocks shares stock equities brokerage
contract contracts agreement agreements lease clause clauses terms sign
customer customers client clients support ticket tickets complaint refund
sales lead leads prospect prospects outreach cold
competitor competitors rival rivals alternatives market
presentation presentations slides deck talk keynote
markdown md pandoc
latex tex thesis bibliography citations bibtex
ocr scanned scan scans receipts
convert conversion converting export exporting format formats
upload uploading share sharing send sending
sync mirror replicate copy
folder directory dir path
organise organize sort sorting tidy arrange rename
clean cleaning tidy messy dirty normalise normalize inconsistent
missing blank blanks empty null nulls
merge combine join concatenate stitch unite
compare comparison versus against benchmark stack
sell sold sales revenue turnover
quarter quarterly monthly yearly annual period
math maths arithmetic algebra fractions fraction equation equations geometry calculus
exercise workout running gym fitness training
catalog catalogue listing listings inventory products
skill skills procedure procedures playbook instructions recipe howto how-to
iris agent assistant
"""


@lru_cache(maxsize=1)
def concepts() -> dict[str, tuple[str, ...]]:
    """Stemmed word -> the concept tokens it stands for."""
    table: dict[str, list[str]] = {}
    for line in GROUPS.strip().splitlines():
        words = line.split()
        if len(words) < 2:
            continue
        concept = "~" + words[0]
        for word in words:
            if "-" in word or ";" in word:  # the tokenizer never yields these whole
                continue
            key = stem(word.casefold())
            if concept not in table.setdefault(key, []):
                table[key].append(concept)
    return {key: tuple(value) for key, value in table.items()}

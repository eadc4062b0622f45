"""Injected orders in languages other than English: "ignore/forget the previous instructions"
and "your new task is", which carry most attacks, in the languages Iris' users write most.
The text is casefolded and NFKC-normalised first (``core.security.scanner.fold``)."""

from __future__ import annotations

from core.security.phrases import rule

_W = r"(?: \S+){0,4}?"  # a few words in between

INTL_PHRASES = (
    rule(
        "prompt_injection",
        "tells the model to ignore its instructions (in another language)",
        # Spanish
        rf"\b(?:olvida|ignora|omite|descarta|olvide|ignore)\b{_W} (?:lo que (?:te|le) "
        r"(?:dijeron|han dicho|indicaron|pidieron)|(?:las |tus |sus )?(?:instrucciones|indicaciones"
        r"|reglas|órdenes) (?:anteriores|previas))",
        # French
        rf"\b(?:oublie|oubliez|ignore|ignorez|néglige)\b{_W} (?:tout )?(?:ce qu'on t'a dit|ce que"
        r" l'on t'a dit|ce qu'on vous a dit|(?:les |tes |vos )?(?:instructions|consignes|règles"
        r"|directives) (?:précédentes|antérieures))",
        # German
        rf"\b(?:vergiss|vergessen sie|ignoriere|ignorieren sie|missachte)\b{_W} (?:was man dir "
        r"(?:vorher|zuvor|bisher) gesagt hat|(?:alle |die )?(?:vorherigen|bisherigen|früheren"
        r"|obigen) (?:anweisungen|befehle|regeln|vorgaben))",
        # Russian
        rf"(?:игнорируй|игнорируйте|проигнорируй|забудь|забудьте|не обращай(?:те)? внимания на)"
        rf"{_W} (?:(?:предыдущие|прежние|прошлые|вышеуказанные|ранее данные|все предыдущие)"
        r"(?: \S+)? (?:инструкции|указания|правила|команды)|(?:всё|все),? что (?:тебе|вам) "
        r"(?:говорили|сказали))",
        # Chinese
        r"(?:忽略|无视|忘记|忘掉|不要理会|不要理睬|不必理会)(?:之前|以上|先前|前面|上述|此前)的?"
        r"(?:所有|全部)?的?(?:指令|指示|说明|提示|要求|规则|内容|设定)",
        # Japanese
        r"(?:以前|前|これまで|上記|先)の(?:すべての|全ての)?(?:指示|命令|ルール|指令)を"
        r"(?:すべて|全て)?(?:無視|忘れ)",
        # Korean
        r"(?:이전|앞|기존)의? (?:모든 )?(?:지시|명령|지침|규칙)(?:을|를|은|는)? (?:모두 )?"
        r"(?:무시|잊어)",
        # Arabic
        r"(?:تجاهل|انس) (?:جميع |كل )?(?:التعليمات|الأوامر|الإرشادات) السابقة",
        # Hindi
        r"पिछले (?:सभी )?(?:निर्देशों|आदेशों) को (?:अनदेखा|नज़रअंदाज़|नजरअंदाज|भूल)",
        # Dutch
        rf"\b(?:negeer|vergeet)\b{_W} (?:vorige|eerdere|voorgaande) (?:instructies|opdrachten"
        r"|regels)",
        # Turkish
        r"önceki (?:tüm |bütün )?(?:talimatları|komutları|kuralları) (?:yok say|görmezden gel"
        r"|unut)",
    ),
    rule(
        "prompt_injection",
        "gives the model a new task (in another language)",
        r"\btu (?:nueva|verdadera) (?:tarea|misión) es\b",
        r"\bta (?:nouvelle|vraie) (?:tâche|mission) (?:est|consiste)\b",
        r"\bdeine (?:neue|eigentliche|wahre) aufgabe (?:ist|lautet)\b",
        r"твоя (?:новая|настоящая) (?:задача|цель)",
        r"你的(?:新|真正的)任务",
        r"\bsua nova tarefa é\b",
        r"\bil tuo nuovo compito è\b",
    ),
)

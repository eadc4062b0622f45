"""What the clarify tests of every platform share (the scripted model is the folder's
``scripted_llm`` fixture)."""

ASK = {"question": "Which size?", "choices": ["Small", "Large"]}


def user_turns(llm):
    """The user messages the model was sent, in order (a press arrives as one)."""
    return [r["messages"][-1]["content"] for r in llm.requests
            if r["messages"][-1]["role"] == "user"]

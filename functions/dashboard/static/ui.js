// The dashboard's only script: the chat's streamed answer and confirmations. Every page works
// without it (the chat form posts and reloads).
"use strict";

function csrfToken() {
  const field = document.querySelector("input[name=csrf]");
  return field ? field.value : "";
}

function bubble(log, role, text) {
  const div = document.createElement("div");
  div.className = "bubble " + role;
  div.textContent = text;
  log.appendChild(div);
  div.scrollIntoView({ block: "end" });
  return div;
}

// A turn that started a session: the sidebar lists it at once, and the form continues it.
async function refreshSessions(form) {
  const list = document.querySelector("ul.sessions");
  const page = await fetch(location.pathname, { credentials: "same-origin" });
  if (!list || !page.ok) return;
  const fresh = new DOMParser().parseFromString(await page.text(), "text/html");
  const sessions = fresh.querySelector("ul.sessions");
  if (sessions) list.replaceWith(sessions);
  const current = fresh.querySelector("input[name=session]");
  if (current && !form.elements.session.value) form.elements.session.value = current.value;
}

async function streamTurn(form) {
  const log = document.getElementById("log");
  const input = form.querySelector("textarea[name=text]");
  const text = input.value.trim();
  if (!text) return;
  const button = form.querySelector("button[type=submit]");
  button.disabled = true;
  bubble(log, "user", text);
  const answer = bubble(log, "assistant", "…");
  answer.setAttribute("aria-live", "polite");
  answer.dataset.state = "streaming";
  input.value = "";
  const startedNew = !form.elements.session.value;
  const body = new URLSearchParams(new FormData(form));
  body.set("text", text);
  try {
    const response = await fetch(form.dataset.stream, {
      method: "POST", body: body, credentials: "same-origin",
      headers: { "X-CSRF-Token": csrfToken() },
    });
    if (!response.ok || !response.body) throw new Error("the server answered " + response.status);
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    let buffer = "", shown = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true });
      let cut;
      while ((cut = buffer.indexOf("\n\n")) >= 0) {
        const event = buffer.slice(0, cut);
        buffer = buffer.slice(cut + 2);
        if (!event.startsWith("data: ")) continue;
        const data = event.slice(6);
        if (data === "[DONE]") continue;
        const parsed = JSON.parse(data);
        if (parsed.error) { shown = "⚠ " + parsed.error.message; break; }
        if (parsed.session && !form.elements.session.value) {
          form.elements.session.value = parsed.session;
        }
        const delta = parsed.choices && parsed.choices[0].delta.content;
        if (delta) shown += delta;
        answer.textContent = shown || "…";
      }
    }
    answer.textContent = shown || "(no answer)";
    if (startedNew) await refreshSessions(form);
  } catch (err) {
    answer.textContent = "⚠ " + err.message;
  } finally {
    answer.dataset.state = "done";
    button.disabled = false;
    input.focus();
  }
}

document.addEventListener("submit", (event) => {
  const form = event.target;
  if (form.dataset.confirm && !window.confirm(form.dataset.confirm)) {
    event.preventDefault();
    return;
  }
  if (form.dataset.stream && window.fetch && window.ReadableStream) {
    event.preventDefault();
    streamTurn(form);
  }
});

document.addEventListener("keydown", (event) => {
  const target = event.target;
  if (event.key === "Enter" && (event.ctrlKey || event.metaKey) && target.form
      && target.form.dataset.stream) {
    event.preventDefault();
    target.form.requestSubmit();
  }
});

document.documentElement.dataset.ready = "1";

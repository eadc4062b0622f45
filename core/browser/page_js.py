"""The script the driver runs in the page for a snapshot (copied beside ``driver.py``): each
visible element one can act on gets a short reference (``data-iris-ref="e7"``) and a line
(role, label, value, link target); headings, images and text get lines of their own. It returns
``{"title": …, "lines": […]}`` as JSON."""

SNAPSHOT_JS = r"""
(() => {
  const out = []; let n = 0;
  // refs of an earlier snapshot of this page: an element it numbered that is gone from view
  // must not answer to a number the new snapshot gives another
  for (const el of document.querySelectorAll('[data-iris-ref]'))
    el.removeAttribute('data-iris-ref');
  const ROLES = {A: 'link', BUTTON: 'button', SELECT: 'combobox', TEXTAREA: 'textbox',
                 SUMMARY: 'button'};
  const INPUT = {checkbox: 'checkbox', radio: 'radio', submit: 'button', button: 'button',
                 reset: 'button', password: 'password', search: 'searchbox'};
  const vis = el => { const s = getComputedStyle(el);
    return s.display !== 'none' && s.visibility !== 'hidden' && el.getClientRects().length; };
  const label = el => (el.getAttribute('aria-label') || (el.labels && el.labels[0] &&
    el.labels[0].innerText) || el.innerText || el.value || el.getAttribute('placeholder') ||
    el.getAttribute('title') || el.getAttribute('alt') || el.name || '').trim()
    .replace(/\s+/g, ' ').slice(0, 100);
  const walk = node => {
    for (const el of node.children) {
      if (!vis(el)) continue;
      const tag = el.tagName;
      let role = el.getAttribute('role') || ROLES[tag];
      if (tag === 'INPUT') { if (el.type === 'hidden') continue;
                             role = INPUT[el.type] || 'textbox'; }
      if (tag === 'A' && !el.hasAttribute('href')) role = null;
      if (role && (ROLES[tag] || tag === 'INPUT' || el.onclick || el.tabIndex >= 0)) {
        const ref = 'e' + (++n); el.setAttribute('data-iris-ref', ref);
        let line = `[${ref}] ${role} "${label(el)}"`;
        if (tag === 'INPUT' && role !== 'password' && el.value && !INPUT[el.type])
          line += ` value="${el.value.slice(0, 60)}"`;
        if (el.checked) line += ' checked';
        if (tag === 'A') line += ` -> ${el.getAttribute('href').slice(0, 120)}`;
        out.push(line); continue;
      }
      if (/^H[1-6]$/.test(tag)) { out.push(`heading "${label(el)}"`); continue; }
      if (tag === 'IMG') { out.push(`img "${label(el)}"`); continue; }
      const own = [...el.childNodes].filter(c => c.nodeType === 3)
        .map(c => c.textContent.trim()).join(' ').replace(/\s+/g, ' ').trim();
      if (own && !['SCRIPT', 'STYLE', 'NOSCRIPT'].includes(tag)) out.push('text: ' + own);
      walk(el);
    }
  };
  if (document.body) walk(document.body);
  return JSON.stringify({title: document.title, lines: out});
})()
"""

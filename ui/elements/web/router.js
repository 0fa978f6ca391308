(() => {
  if (window.__appLinks) return;
  window.__appLinks = true;
  const pages = new Set(/*APP_PAGES*/[]);
  document.addEventListener("click", (event) => {
    if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey
        || event.altKey) return;
    const anchor = event.target.closest ? event.target.closest("a") : null;
    // Only links written in the pages' text (markdown, the overview's picture); Streamlit routes its own.
    if (!anchor || anchor.hasAttribute("download")
        || !anchor.closest('[data-testid="stMarkdownContainer"], [data-testid="stCaptionContainer"], '
          + '[data-testid="stHtml"]')) return;
    const raw = anchor.getAttribute("href") || anchor.getAttribute("xlink:href");
    if (!raw || raw.startsWith("#")) return;
    const url = new URL(raw, window.location.href);
    const page = url.pathname.split("/").filter(Boolean).pop() || "";
    if (url.origin !== window.location.origin || !pages.has(page)) return;
    event.preventDefault();
    event.stopPropagation();
    window.history.pushState({}, "", url.pathname + url.search + url.hash);
    window.dispatchEvent(new PopStateEvent("popstate"));
  }, true);
})();

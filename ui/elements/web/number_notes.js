// A number field refuses some typed values in the browser without a word reaching the page: an empty field, or one
// beyond the float range, is sent as "no value", which Streamlit's number input turns into its default, so the
// reader's last value is silently replaced; a bounded field (min/max) marks a value outside its bounds with an icon
// whose message needs a hover. When such a value is committed (Enter, or leaving the field), the field is given back
// the last value it took (when the reader entered it, stepped it or committed one), before Streamlit reads it, and a
// line under the field names what was refused and what is kept, as the page names the values it refuses itself; the
// line goes once a value the field takes is committed. The text is set as text, never as markup.
(() => {
  if (window.__numberNotes) return;
  window.__numberNotes = true;
  const shown = (n) => n.toLocaleString("en-US", { maximumFractionDigits: 6 });
  const isNumberField = (node) => node instanceof HTMLInputElement && node.dataset.testid === "stNumberInputField";
  const setValue = Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, "value").set;
  // Why the field cannot take what was typed, worded as the page words the values it refuses; null if it can.
  function refusal(input) {
    const typed = input.value.trim();
    if (input.validity.badInput) return "what was typed cannot be used: it is not a number this field can hold";
    if (typed === "") return "an empty field cannot be used: it holds no number";
    const low = input.min === "" ? -Infinity : Number(input.min);
    const high = input.max === "" ? Infinity : Number(input.max);
    const value = Number(typed);
    if (value < low || value > high) return `“${typed}” cannot be used: it is outside ${shown(low)} … ${shown(high)}`;
    return null;
  }
  function commit(event) {
    const input = event.target;
    if (!isNumberField(input) || (event.type === "keydown" && event.key !== "Enter")) return;
    const field = input.closest('[data-testid="stNumberInput"]');
    const reason = refusal(input);
    let note = field && field.querySelector(":scope > .number-note");
    if (!reason) {  // a value the field takes: it is the one to keep from now on
      input.dataset.held = input.value;
      if (note) note.remove();
      return;
    }
    if (!field || input.dataset.held === undefined) return;
    setValue.call(input, input.dataset.held);  // the held value goes back before Streamlit reads the field
    input.dispatchEvent(new Event("input", { bubbles: true }));
    if (!note) {
      note = document.createElement("p");
      note.className = "number-note";
      note.setAttribute("role", "status");
      field.appendChild(note);
    }
    const label = input.getAttribute("aria-label") || "This field";
    note.textContent = `⚠ ${label}: ${reason}; the field keeps ${shown(Number(input.dataset.held))}.`;
  }
  document.addEventListener("focusin", (event) => {
    if (isNumberField(event.target) && refusal(event.target) === null) event.target.dataset.held = event.target.value;
  }, true);
  document.addEventListener("click", (event) => {  // a step (−/+) changes the value the field holds
    const step = event.target.closest && event.target.closest(
      '[data-testid="stNumberInputStepUp"], [data-testid="stNumberInputStepDown"]');
    const input = step && step.closest('[data-testid="stNumberInput"]').querySelector("input");
    if (input) setTimeout(() => { if (refusal(input) === null) input.dataset.held = input.value; }, 0);
  }, true);
  document.addEventListener("keydown", commit, true);
  document.addEventListener("focusout", commit, true);
})();

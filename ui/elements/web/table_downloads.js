// A static table's CSV download (ui/elements/static_table.py): the button holds the CSV; a click saves it under its
// file name.
(() => {
  if (window.__tableDownloads) return;
  window.__tableDownloads = true;
  document.addEventListener("click", (event) => {
    const button = event.target.closest && event.target.closest("button.table-download[data-csv]");
    if (!button) return;
    const url = URL.createObjectURL(new Blob([button.dataset.csv], { type: "text/csv" }));
    const save = document.createElement("a");
    save.href = url;
    save.download = button.dataset.file;
    document.body.appendChild(save);
    save.click();
    save.remove();
    setTimeout(() => URL.revokeObjectURL(url), 0);
  });
})();

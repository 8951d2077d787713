// Keyboard shortcuts of the session page (spec §7.4). Each one sends the same
// command a person could type, so it is parsed, applied and logged the same way.
(function () {
  "use strict";
  const WORK_MODES = ["chat", "plan", "build", "review", "repair", "research"];
  const PROFILES = ["restricted", "normal", "trusted", "unrestricted"];

  function next(values, current) {
    return values[(values.indexOf(current) + 1) % values.length];
  }

  function commandFor(key, badge) {
    switch (key) {
      case "M": return "/mode " + next(WORK_MODES, badge.dataset.workMode);
      case "A": return "/control autonomous";
      case "S": return "/control assisted";
      case "I": return "/control manual";
      case "R": return "/mode repair";
      case "P": return "/permission-profile " + next(PROFILES, badge.dataset.permissionProfile);
      default: return null;
    }
  }

  document.addEventListener("keydown", function (event) {
    if (!event.ctrlKey || !event.shiftKey || event.altKey || event.metaKey) return;
    const page = document.getElementById("session-page");
    const badge = document.getElementById("mode-badge");
    if (!page || !badge) return;
    const command = commandFor(event.key.toUpperCase(), badge);
    if (!command) return;
    event.preventDefault();
    htmx.ajax("POST", page.dataset.commandUrl, {
      target: "#command-result",
      swap: "outerHTML",
      values: { text: command },
    });
  });
})();

// "request sent N s ago" (tasks_app/_model_waiting.html, on the unit page and the session
// page's plans): counted here from the age the server rendered (in ms), so a clock that
// differs from the server's does not matter. Each box is stamped the moment it enters
// the page (load, or a websocket swap that replaces it), not at the next tick: a box
// swapped in again and again must not restart a second behind each time.
(function () {
  function count() {
    document.querySelectorAll("[data-waiting-age-ms]").forEach(function (box) {
      if (!box.dataset.t0) box.dataset.t0 = Date.now() - Number(box.dataset.waitingAgeMs);
      var seconds = box.querySelector("[data-waiting-seconds]");
      var shown = String(Math.floor((Date.now() - Number(box.dataset.t0)) / 1000));
      if (seconds && seconds.textContent !== shown) seconds.textContent = shown;
    });
  }
  count();
  new MutationObserver(count).observe(document.body, { childList: true, subtree: true });
  setInterval(count, 200); // a second shown at most 0.2 s late
})();

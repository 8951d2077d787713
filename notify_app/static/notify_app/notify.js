// Browser notifications (notify_app.consumers.NotificationConsumer): one websocket per
// open page; each message is {id, kind, title, text, url}. An in-page toast always,
// and a desktop popup (Notification API) when the person has allowed it. Nothing here
// posts a form, so no CSRF token is involved.
(function () {
  "use strict";
  var scheme = window.location.protocol === "https:" ? "wss://" : "ws://";
  var url = scheme + window.location.host + "/ws/notifications/";
  var delay = 1000;

  function toasts() {
    var box = document.getElementById("sf-toasts");
    if (!box) {
      box = document.createElement("div");
      box.id = "sf-toasts";
      box.setAttribute("aria-live", "polite");
      document.body.appendChild(box);
    }
    return box;
  }

  function toast(note) {
    var item = document.createElement(note.url ? "a" : "div");
    item.className = "toast";
    if (note.url) { item.href = note.url; }
    var title = document.createElement("strong");
    title.textContent = note.title;
    var text = document.createElement("span");
    text.textContent = note.text;
    item.appendChild(title);
    item.appendChild(text);
    toasts().appendChild(item);
    window.setTimeout(function () { item.remove(); }, 10000);
  }

  function popup(note) {
    if (!("Notification" in window) || Notification.permission !== "granted") { return; }
    var shown = new Notification(note.title, { body: note.text, tag: "sf-" + note.id });
    shown.onclick = function () { window.focus(); if (note.url) { window.location = note.url; } };
  }

  function connect() {
    var socket = new WebSocket(url);
    socket.onopen = function () { delay = 1000; };
    socket.onmessage = function (event) {
      var note = JSON.parse(event.data);
      toast(note);
      popup(note);
    };
    socket.onclose = function (event) {
      if (event.code === 4401) { return; }  // logged out: nothing to hear
      window.setTimeout(connect, delay);
      delay = Math.min(delay * 2, 30000);
    };
  }

  document.addEventListener("click", function (event) {
    if (event.target && event.target.id === "notify-permission" && "Notification" in window) {
      Notification.requestPermission();
    }
  });
  connect();
})();

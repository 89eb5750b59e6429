window.addEventListener("load", function () {
  var imgs = Array.prototype.slice.call(document.images);
  var broken = imgs.filter(function (i) { return !i.complete || i.naturalWidth === 0; });
  document.body.setAttribute("data-images", String(imgs.length));
  document.body.setAttribute("data-broken", String(broken.length));
  broken.forEach(function (i) {
    var p = document.createElement("p"); p.className = "broken";
    p.textContent = "image failed to load: " + i.getAttribute("src"); i.after(p);
  });
});

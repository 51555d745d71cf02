/* report_page.js - injected into a copy of a report's index.html by tests/report_page.sh. After
 * the page's load event (every <img> has loaded or failed by then) it loads each linked SVG as an
 * image too, then writes one line into the page for the test to read from the DOM Chromium dumps:
 * SPOTLAB-PAGE-CHECK figures=N imgs=N broken=[...] svgs=N svg_broken=[...] srcs=[...] */
window.addEventListener('load', function () {
  var imgs = Array.prototype.slice.call(document.images);
  var broken = imgs.filter(function (i) { return !(i.complete && i.naturalWidth > 0 && i.naturalHeight > 0); })
                   .map(function (i) { return i.getAttribute('src'); });
  var links = Array.prototype.slice.call(document.querySelectorAll('a[href$=".svg"]'))
                  .map(function (a) { return a.getAttribute('href'); });
  var svgBroken = [], left = links.length;
  function done() {
    var out = document.createElement('pre');
    out.id = 'spotlab-page-check';
    out.textContent = 'SPOTLAB-PAGE-CHECK figures=' + document.querySelectorAll('figure').length +
        ' imgs=' + imgs.length + ' broken=[' + broken.join(',') + '] svgs=' + links.length +
        ' svg_broken=[' + svgBroken.join(',') + '] srcs=[' +
        imgs.map(function (i) { return i.getAttribute('src'); }).join(',') + ']';
    document.body.appendChild(out);
  }
  if (!left) { done(); return; }
  links.forEach(function (s) {
    var im = new Image();
    im.onload = function () { if (!(im.naturalWidth > 0)) svgBroken.push(s); if (--left === 0) done(); };
    im.onerror = function () { svgBroken.push(s); if (--left === 0) done(); };
    im.src = s;
  });
});

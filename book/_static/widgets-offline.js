/* Loaded between require.js and the Jupyter widgets HTML manager (book/_ext/offline_assets.py).
 *
 * 1. The widget manager is one file of named AMD modules; it loads its fonts from the folder
 *    that require.js assigns to the module "@jupyter-widgets/html-manager/dist/...". Without a
 *    mapping that folder is the page's own (font 404s); map it onto the local copy.
 * 2. The widget manager typesets with MathJax 2's MathJax.Hub.Queue. The book loads MathJax 3,
 *    which has no Hub ("Cannot read properties of undefined (reading 'Queue')"): provide that one
 *    call on top of MathJax 3's typesetPromise once MathJax has loaded.
 */
(function () {
  "use strict";
  var script = document.currentScript;
  var base = script ? script.src.slice(0, script.src.lastIndexOf("/") + 1) : "";
  if (window.requirejs && base) {
    window.requirejs.config({paths: {"@jupyter-widgets/html-manager/dist": base + "offline/html-manager"}});
  }

  function queue(job) {
    var mj = window.MathJax;
    var element = job && job.length > 2 ? job[2] : undefined;
    if (!mj || !mj.startup || !mj.startup.promise) {
      return;
    }
    mj.startup.promise
      .then(function () { return mj.typesetPromise(element ? [element] : undefined); })
      .catch(function (err) { console.warn("MathJax could not typeset a widget:", err); });
  }

  function install() {
    if (window.MathJax && !window.MathJax.Hub) {
      window.MathJax.Hub = {Queue: queue};
    }
  }

  // MathJax 3 loads with "defer" and replaces the configuration object window.MathJax by
  // itself; deferred scripts have run when DOMContentLoaded fires, and the widget manager
  // renders on "load", after it.
  document.addEventListener("DOMContentLoaded", install);
}());

/* The book's own script: accessibility fixes of the theme and of the stored explorers, a note beside
 * every live explorer, and figures that open full size with one tap. Loaded on every page
 * (_config.yml: html_js_files); tests/test_rendered_book_*.py check each effect in Chromium.
 *
 * 1. Theme (sphinx-book-theme / pydata-sphinx-theme), as axe-core reports it:
 *    - buttons whose aria-label leaves out their visible text (search: "Search" beside "Search...
 *      Ctrl+K"; "Toggle hidden content" on "Show code cell source") get a label that contains the
 *      text (rule label-content-name-mismatch);
 *    - the colour-mode button's icons are hidden from assistive technology (their titles are not
 *      part of its name "Color mode");
 *    - the sidebar's fold toggles (<summary> holding only an icon) get a name (rule summary-name);
 *    - the primary sidebar becomes a labelled navigation landmark (rule region).
 * 2. The live explorers' stored state, as the Jupyter widgets HTML manager draws it:
 *    - its figure gets the explorer's own description as its alt text (rule image-alt): the title, what
 *      it plots, the slider values and what the curves do, which perfpriv.widgets.Explorer writes into a
 *      visually hidden element of class pp-figure-alt beside the figure; it is copied again whenever that
 *      text or the image changes (a redraw in a live kernel replaces both). A state stored without that
 *      element gets a generic alt naming the explorer;
 *    - each slider's handle gets the slider's label as its name (rule aria-input-field-name).
 * 3. A note above every live explorer: without a kernel its sliders move but its figure stays at the
 *    default values; the precomputed explorer below works as it is. Hidden once Live Code (Thebe)
 *    reports a running kernel.
 * 4. Every figure of a cell output opens full size on a tap or click (Escape, a tap or the close
 *    button closes it): on a phone the column shrinks axis labels below reading size.
 */
(function () {
  "use strict";

  function text(element) {
    return (element && element.textContent || "").replace(/\s+/g, " ").trim();
  }

  // ------------------------------------------------------------------ 1. theme
  function fixTheme() {
    document.querySelectorAll("button.search-button__button").forEach(function (button) {
      var shown = text(button);
      if (shown) {
        button.setAttribute("aria-label", shown);
      }
    });
    // the colour-mode button is named "Color mode"; its icons' titles ("Light", "Dark", ...) are
    // decoration that axe would count as visible text left out of that name
    document.querySelectorAll(".theme-switch-button svg, .theme-switch-button i").forEach(function (icon) {
      icon.setAttribute("aria-hidden", "true");
      icon.removeAttribute("aria-labelledby");
      icon.removeAttribute("title");
      icon.querySelectorAll("title").forEach(function (title) { title.remove(); });
    });
    document.querySelectorAll("summary[aria-label]").forEach(function (summary) {
      // myst-nb's "Show code cell source" / "Hide code cell source": the name is the visible title
      if (summary.querySelector(".admonition-title")) {
        summary.removeAttribute("aria-label");
      }
    });
    document.querySelectorAll("li.has-children > details > summary").forEach(function (summary) {
      if (!text(summary) && !summary.getAttribute("aria-label")) {
        var link = summary.parentElement.parentElement.querySelector(":scope > a");
        summary.setAttribute("aria-label", "Show or hide the pages under " + (text(link) || "this entry"));
      }
    });
    var sidebar = document.querySelector("#pst-primary-sidebar, .bd-sidebar-primary");
    if (sidebar && !sidebar.getAttribute("role")) {
      sidebar.setAttribute("role", "navigation");
      sidebar.setAttribute("aria-label", "Table of contents of the book");
    }
  }

  // ------------------------------------------------------------------ 2. stored explorers
  function explorerTitle(element) {
    var box = element.closest(".jupyter-widgets.widget-vbox");
    var outer = box;
    while (outer && outer.parentElement && outer.parentElement.closest(".jupyter-widgets.widget-vbox")) {
      outer = outer.parentElement.closest(".jupyter-widgets.widget-vbox");
    }
    var title = outer && outer.querySelector(".widget-html b, .widget-html-content b");
    return text(title);
  }

  // the explorer's own description of the figure it shows (perfpriv.widgets.Explorer.alt), in a visually
  // hidden element beside the figure; it is rewritten before each new image arrives in a live kernel
  function describedAlt(img) {
    var box = img.closest(".jupyter-widgets.widget-vbox");
    while (box) {
      var described = box.querySelector(".pp-figure-alt");
      if (described) {
        return text(described);
      }
      box = box.parentElement && box.parentElement.closest(".jupyter-widgets.widget-vbox");
    }
    return "";
  }

  function fixWidgets(root) {
    root.querySelectorAll(".widget-output img").forEach(function (img) {
      var alt = describedAlt(img);
      if (!alt && img.hasAttribute("alt")) {
        return;
      }
      if (!alt) {   // a stored state from before the explorers described their figures
        var title = explorerTitle(img);
        alt = (title ? "Figure of the live explorer \u201c" + title + "\u201d" : "Figure of the live explorer")
          + ", drawn at the values on its sliders (their default values until a kernel is running)";
      }
      if (img.getAttribute("alt") !== alt) {
        img.setAttribute("alt", alt);
      }
    });
    root.querySelectorAll(".widget-slider [role=slider]:not([aria-label])").forEach(function (handle) {
      var slider = handle.closest(".widget-slider");
      var label = slider && slider.querySelector(".widget-label");
      handle.setAttribute("aria-label", text(label) || "slider");
    });
  }

  // ------------------------------------------------------------------ 3. note beside live explorers
  var NOTE = "This explorer needs a running Python kernel: start one with <b>Binder</b> or <b>Live Code</b> "
    + "from the rocket icon at the top of the page, then run the cell. Until then its sliders move but its "
    + "figure keeps the default values. The <b>precomputed</b> explorer below works as it is, with no kernel.";

  function addNotes() {
    document.querySelectorAll(".cell_output").forEach(function (output) {
      if (!output.querySelector('script[type="application/vnd.jupyter.widget-view+json"], .jupyter-widgets')
          || output.querySelector(".pp-live-note")) {
        return;
      }
      var note = document.createElement("p");
      note.className = "pp-live-note";
      note.setAttribute("role", "note");
      note.innerHTML = NOTE;
      output.insertBefore(note, output.firstChild);
    });
  }

  function watchThebe() {
    // sphinx-thebe loads Thebe when Live Code is pressed; mark the page once its kernel is ready
    var tries = 0;
    var timer = window.setInterval(function () {
      tries += 1;
      if (window.thebelab && typeof window.thebelab.on === "function") {
        window.clearInterval(timer);
        window.thebelab.on("status", function (evt, data) {
          document.body.classList.toggle("pp-kernel-ready", !!data && data.status === "ready");
        });
      } else if (tries > 600) {
        window.clearInterval(timer);
      }
    }, 500);
  }

  // ------------------------------------------------------------------ 4. figures full size
  var viewer = null;

  function closeViewer() {
    if (viewer) {
      viewer.hidden = true;
      document.body.classList.remove("pp-viewer-open");
    }
  }

  function openViewer(img) {
    if (!viewer) {
      viewer = document.createElement("div");
      viewer.className = "pp-viewer";
      viewer.setAttribute("role", "dialog");
      viewer.setAttribute("aria-modal", "true");
      viewer.setAttribute("aria-label", "Figure at full size");
      viewer.innerHTML = '<button type="button" class="pp-viewer-close">Close</button><div class="pp-viewer-frame"><img></div>';
      viewer.addEventListener("click", function (event) {
        if (!event.target.closest("img") || event.target.closest(".pp-viewer-close")) {
          closeViewer();
        }
      });
      viewer.querySelector(".pp-viewer-frame img").addEventListener("click", closeViewer);
      document.addEventListener("keydown", function (event) {
        if (event.key === "Escape" && viewer && !viewer.hidden) {
          closeViewer();
        }
      });
      document.body.appendChild(viewer);
    }
    var big = viewer.querySelector(".pp-viewer-frame img");
    big.src = img.currentSrc || img.src;
    // the figures are stored at twice their page width: at half their pixel size they read as on a wide screen
    // (at least), and as wide as the screen allows up to their own pixel size
    big.style.width = Math.max(img.naturalWidth / 2, Math.min(window.innerWidth - 16, img.naturalWidth)) + "px";
    big.alt = img.getAttribute("alt") || "";
    viewer.hidden = false;
    document.body.classList.add("pp-viewer-open");
    viewer.querySelector(".pp-viewer-close").focus();
  }

  function zoomable(img) {
    return img.closest(".cell_output") && !img.closest(".pp-viewer");
  }

  function markZoomable(root) {
    root.querySelectorAll(".cell_output img").forEach(function (img) {
      if (zoomable(img) && !img.classList.contains("pp-zoomable")) {
        img.classList.add("pp-zoomable");
        img.setAttribute("title", "Open the figure at full size");
      }
    });
  }

  document.addEventListener("click", function (event) {
    var img = event.target.closest && event.target.closest("img.pp-zoomable");
    if (img) {
      // Sphinx links a large figure to its file: open it here instead of leaving the page
      event.preventDefault();
      openViewer(img);
    }
  });

  // ------------------------------------------------------------------ wiring
  function all() {
    fixTheme();
    fixWidgets(document);
    markZoomable(document);
  }

  document.addEventListener("DOMContentLoaded", function () {
    addNotes();
    all();
    // the widget manager draws the stored states after "load", and a live kernel replaces an explorer's image
    // and its description on every redraw: fix what is added as it appears (the alts set here change
    // attributes only, which this observer does not watch)
    new MutationObserver(function () {
      fixTheme();
      fixWidgets(document);
      markZoomable(document);
    }).observe(document.body, {childList: true, subtree: true});
    document.querySelectorAll(".thebe-launch-button").forEach(function (button) {
      button.addEventListener("click", watchThebe, {once: true});
    });
  });
  window.addEventListener("load", all);
}());

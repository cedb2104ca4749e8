// Following the conversation: a reader at its end stays at its end as messages arrive
// (its own pane on a wide screen, the page on a phone); a reader who scrolled up to read
// is left there and told of a new message by a "New message ↓" marker, which takes them
// to it. A conversation opened (or replayed) starts at its newest message.

/** The phone layout (app.css): the page scrolls, not the conversation's own pane. */
const STACKED = window.matchMedia("(max-width: 820px)");

/** How close to the end (px) still counts as at the end. */
const NEAR = 60;

export class Follower {
  /**
   * @param {HTMLElement} list the conversation's <ol>
   * @param {HTMLButtonElement | null} marker the "New message ↓" button (hidden until needed)
   */
  constructor(list, marker) {
    this.list = list;
    this.marker = marker;
    this.pane = list.closest(".chat") || list;
    this.stuck = true; // the reader is at the end: follow
    list.addEventListener("scroll", () => this.scrolled(), { passive: true });
    window.addEventListener("scroll", () => this.scrolled(), { passive: true });
    // The pane changes size (a notice, the answer box, approvals appear): stay at the end.
    new ResizeObserver(() => { if (this.stuck) this.toEnd(); }).observe(list);
    marker?.addEventListener("click", () => {
      this.stuck = true;
      this.toEnd();
      this.hide();
      list.focus({ preventScroll: true }); // the marker is gone: focus goes to what it showed
    });
  }

  /** Whether the conversation scrolls in a pane of its own (else the page scrolls). */
  ownPane() {
    return !STACKED.matches;
  }

  atEnd() {
    if (this.ownPane()) {
      const l = this.list;
      return l.scrollHeight - l.scrollTop - l.clientHeight < NEAR;
    }
    const bottom = this.pane.getBoundingClientRect().bottom;
    return bottom >= 0 && bottom <= window.innerHeight + NEAR;
  }

  scrolled() {
    this.stuck = this.atEnd();
    if (this.stuck) this.hide();
  }

  toEnd() {
    if (this.ownPane()) {
      this.list.scrollTop = this.list.scrollHeight;
      return;
    }
    const end = this.pane.getBoundingClientRect().bottom + window.scrollY;
    window.scrollTo(0, Math.max(0, end - window.innerHeight));
  }

  /** Something was added: follow it, or (when it is a message) say one arrived below. */
  added(message = false) {
    if (this.stuck) this.toEnd();
    else if (message && this.marker) this.marker.hidden = false;
  }

  hide() {
    if (this.marker) this.marker.hidden = true;
  }

  /** A conversation (re)opens: it starts at its end. */
  reset() {
    this.stuck = true;
    this.hide();
    this.toEnd();
  }
}

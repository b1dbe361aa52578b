/**
 * Browser helpers: rate-limiting event handlers, trapping keyboard focus in
 * dialogs, and small conveniences around class lists and event listeners.
 */

type AnyFunction = (...args: any[]) => void;

export interface Cancellable {
  cancel(): void;
}

export type Debounced<F extends AnyFunction> = ((...args: Parameters<F>) => void) & Cancellable & { flush(): void };

const FOCUSABLE_SELECTOR = [
  "a[href]",
  "area[href]",
  "button:not([disabled])",
  "input:not([disabled]):not([type='hidden'])",
  "select:not([disabled])",
  "textarea:not([disabled])",
  "[tabindex]:not([tabindex='-1'])",
  "[contenteditable='true']",
].join(",");

/**
 * Wrap a function so it runs only after calls have stopped for `waitMs`.
 * Useful for search boxes that should not query on every keystroke. The
 * returned function also has `cancel()` to drop a pending call and
 * `flush()` to run it immediately.
 */
export function debounce<F extends AnyFunction>(fn: F, waitMs: number): Debounced<F> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  let lastArgs: Parameters<F> | undefined;

  const run = () => {
    timer = undefined;
    if (lastArgs) {
      const args = lastArgs;
      lastArgs = undefined;
      fn(...args);
    }
  };

  const debounced = ((...args: Parameters<F>) => {
    lastArgs = args;
    if (timer !== undefined) {
      clearTimeout(timer);
    }
    timer = setTimeout(run, waitMs);
  }) as Debounced<F>;

  debounced.cancel = () => {
    if (timer !== undefined) clearTimeout(timer);
    timer = undefined;
    lastArgs = undefined;
  };
  debounced.flush = () => {
    if (timer !== undefined) clearTimeout(timer);
    run();
  };
  return debounced;
}

/**
 * Wrap a function so it runs at most once every `intervalMs`. The first
 * call runs straight away; calls during the quiet period are collapsed into
 * a single trailing call with the latest arguments. Suited to scroll and
 * resize handlers.
 */
export function throttle<F extends AnyFunction>(fn: F, intervalMs: number): ((...args: Parameters<F>) => void) & Cancellable {
  let lastRun = 0;
  let trailing: ReturnType<typeof setTimeout> | undefined;
  let pendingArgs: Parameters<F> | undefined;

  const throttled = ((...args: Parameters<F>) => {
    const now = Date.now();
    const remaining = intervalMs - (now - lastRun);
    if (remaining <= 0) {
      lastRun = now;
      fn(...args);
      return;
    }
    pendingArgs = args;
    if (trailing === undefined) {
      trailing = setTimeout(() => {
        trailing = undefined;
        lastRun = Date.now();
        if (pendingArgs) fn(...pendingArgs);
        pendingArgs = undefined;
      }, remaining);
    }
  }) as ((...args: Parameters<F>) => void) & Cancellable;

  throttled.cancel = () => {
    if (trailing !== undefined) clearTimeout(trailing);
    trailing = undefined;
    pendingArgs = undefined;
  };
  return throttled;
}

/** Return the elements inside a container that can receive keyboard focus, in tab order. */
export function getFocusableElements(container: HTMLElement): HTMLElement[] {
  const nodes = Array.from(container.querySelectorAll<HTMLElement>(FOCUSABLE_SELECTOR));
  return nodes.filter((el) => el.offsetParent !== null || el === document.activeElement);
}

/**
 * Keeps Tab and Shift+Tab cycling inside a container such as a modal
 * dialog, and restores focus to the previously focused element when the
 * trap is released.
 */
export class FocusTrap {
  private previouslyFocused: Element | null = null;
  private active = false;

  constructor(private readonly container: HTMLElement, private readonly onEscape?: () => void) {
    this.handleKeydown = this.handleKeydown.bind(this);
  }

  /** Start trapping focus and move focus to the first focusable child. */
  activate(): void {
    if (this.active) return;
    this.active = true;
    this.previouslyFocused = document.activeElement;
    document.addEventListener("keydown", this.handleKeydown, true);
    const [first] = getFocusableElements(this.container);
    (first ?? this.container).focus();
  }

  /** Stop trapping focus and give focus back to where it was before activation. */
  deactivate(): void {
    if (!this.active) return;
    this.active = false;
    document.removeEventListener("keydown", this.handleKeydown, true);
    if (this.previouslyFocused instanceof HTMLElement) {
      this.previouslyFocused.focus();
    }
  }

  /**
   * Intercept Tab at the edges of the container so focus wraps around
   * instead of escaping to the page behind, and call the escape handler
   * when the user presses Escape.
   */
  private handleKeydown(event: KeyboardEvent): void {
    if (event.key === "Escape" && this.onEscape) {
      event.preventDefault();
      this.onEscape();
      return;
    }
    if (event.key !== "Tab") return;
    const focusable = getFocusableElements(this.container);
    if (focusable.length === 0) {
      event.preventDefault();
      return;
    }
    const first = focusable[0];
    const last = focusable[focusable.length - 1];
    if (event.shiftKey && document.activeElement === first) {
      event.preventDefault();
      last.focus();
    } else if (!event.shiftKey && document.activeElement === last) {
      event.preventDefault();
      first.focus();
    }
  }
}

/**
 * Build a class attribute string from a mix of strings and condition maps,
 * skipping falsy entries: `classNames("btn", { active: isOn })`.
 */
export function classNames(...parts: Array<string | false | null | undefined | Record<string, boolean>>): string {
  const names: string[] = [];
  for (const part of parts) {
    if (!part) continue;
    if (typeof part === "string") {
      names.push(part);
    } else {
      for (const [name, enabled] of Object.entries(part)) {
        if (enabled) names.push(name);
      }
    }
  }
  return names.join(" ");
}

/** Add or remove several classes on an element according to a map of flags. */
export function setClasses(element: Element, flags: Record<string, boolean>): void {
  for (const [name, enabled] of Object.entries(flags)) {
    element.classList.toggle(name, enabled);
  }
}

/**
 * Listen for an event and return a function that removes the listener,
 * which makes cleanup in component teardown a one-liner.
 */
export function listen<K extends keyof HTMLElementEventMap>(
  target: HTMLElement | Window,
  type: K,
  handler: (event: HTMLElementEventMap[K]) => void,
  options?: AddEventListenerOptions,
): () => void {
  target.addEventListener(type, handler as EventListener, options);
  return () => target.removeEventListener(type, handler as EventListener, options);
}

/**
 * Call a handler when the user clicks or taps outside an element, for
 * closing dropdowns and popovers. Returns an unsubscribe function.
 */
export function onClickOutside(element: HTMLElement, handler: (event: Event) => void): () => void {
  const listener = (event: Event) => {
    if (event.target instanceof Node && !element.contains(event.target)) {
      handler(event);
    }
  };
  document.addEventListener("mousedown", listener);
  document.addEventListener("touchstart", listener);
  return () => {
    document.removeEventListener("mousedown", listener);
    document.removeEventListener("touchstart", listener);
  };
}

// @ts-check
/** Copy buttons: the Clipboard API where the page may use it, else the text is selected for Ctrl+C. */
import { announce, h } from './dom.js';

/** @param {HTMLElement} element */
function selectContents(element) {
  if (element instanceof HTMLInputElement || element instanceof HTMLTextAreaElement) {
    element.focus();
    element.select();
    return;
  }
  const range = document.createRange();
  range.selectNodeContents(element);
  const selection = window.getSelection();
  selection?.removeAllRanges();
  selection?.addRange(range);
}

/**
 * A button that copies `text()` and, when the clipboard is unavailable, selects `source` instead (after
 * `beforeSelect()`, which can make it selectable).
 * @param {{ text: () => string, source: HTMLElement, label?: string, beforeSelect?: () => void }} options
 */
export function copyButton({ text, source, label = 'Copy', beforeSelect }) {
  const button = h('button', { type: 'button', class: 'button secondary copy-button' }, label);
  /** @type {ReturnType<typeof setTimeout> | undefined} */
  let reset;
  button.addEventListener('click', async () => {
    try {
      // navigator.clipboard exists only on secure origins (https, or localhost).
      await navigator.clipboard.writeText(text());
      button.textContent = 'Copied';
      announce('Copied to the clipboard.');
    } catch {
      beforeSelect?.();
      selectContents(source);
      button.textContent = 'Selected: press Ctrl+C';
      announce('Could not use the clipboard; the text is selected, press Control C or Command C to copy it.');
    }
    // From the last click: an earlier click's timer must not put the label back early.
    clearTimeout(reset);
    reset = setTimeout(() => {
      button.textContent = label;
    }, 4000);
  });
  return button;
}

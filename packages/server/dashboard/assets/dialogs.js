// @ts-check
/** Confirmations in a modal `<dialog>`: focus is trapped in it, Escape cancels, focus returns to the opener. */
import { h, uid } from './dom.js';

/**
 * Resolves to the dialog's `<form>` when the reader confirms (so callers can read fields in `content`), null
 * when they cancel, or when `signal` (the page's) fires: a dialog never outlives the page that opened it.
 * @param {{ title: string, content?: Child, confirmLabel: string, danger?: boolean, signal?: AbortSignal }} options
 * @returns {Promise<HTMLFormElement | null>}
 */
export function confirmDialog({ title, content = [], confirmLabel, danger = false, signal }) {
  if (signal?.aborted) return Promise.resolve(null);
  const opener = document.activeElement;
  const titleId = uid('dialog-title');
  const form = h(
    'form',
    { method: 'dialog', class: 'dialog-form' },
    h('h2', { id: titleId }, title),
    content,
    h(
      'div',
      { class: 'dialog-actions' },
      h(
        'button',
        { type: 'submit', value: 'cancel', class: 'button secondary', formnovalidate: true },
        'Cancel',
      ),
      h(
        'button',
        { type: 'submit', value: 'confirm', class: danger ? 'button danger' : 'button' },
        confirmLabel,
      ),
    ),
  );
  const dialog = h('dialog', { 'aria-labelledby': titleId }, form);
  document.body.append(dialog);
  const abandon = () => dialog.close();
  signal?.addEventListener('abort', abandon);
  return new Promise((resolve) => {
    dialog.addEventListener('close', () => {
      signal?.removeEventListener('abort', abandon);
      dialog.remove();
      if (opener instanceof HTMLElement && opener.isConnected) opener.focus();
      resolve(dialog.returnValue === 'confirm' ? form : null);
    });
    dialog.showModal();
  });
}

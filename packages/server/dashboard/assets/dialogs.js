/** Confirmations in a modal `<dialog>`: focus is trapped in it, Escape cancels, focus returns to the opener. */
import { h } from './dom.js';

/**
 * Resolves to the dialog's `<form>` when the reader confirms (so callers can read fields in `content`), null
 * when they cancel.
 */
export function confirmDialog({ title, content = [], confirmLabel, danger = false }) {
  const opener = document.activeElement;
  const titleId = `dialog-title-${Date.now()}`;
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
  return new Promise((resolve) => {
    dialog.addEventListener('close', () => {
      dialog.remove();
      if (opener instanceof HTMLElement && opener.isConnected) opener.focus();
      resolve(dialog.returnValue === 'confirm' ? form : null);
    });
    dialog.showModal();
  });
}

// @ts-check
/**
 * A refusal that names a field (the error's `param`: `duration`, `image_urls[1]`) shown beside the control that
 * field came from: the message under it, `aria-invalid` on it, and the message added to its `aria-describedby`
 * so that a screen reader says it with the field.
 */
import { ApiError } from './api.js';
import { h, uid } from './dom.js';

/**
 * `controlOf(param)` finds the control a field name stands for (null: none of this form's).
 * @param {(param: string) => HTMLElement | null} controlOf
 */
export function fieldErrors(controlOf) {
  /** @type {{ control: HTMLElement, message: HTMLElement }[]} */
  let shown = [];

  function clear() {
    for (const { control, message } of shown) {
      message.remove();
      const rest = (control.getAttribute('aria-describedby') ?? '')
        .split(' ')
        .filter((id) => id && id !== message.id);
      if (rest.length > 0) control.setAttribute('aria-describedby', rest.join(' '));
      else control.removeAttribute('aria-describedby');
      control.removeAttribute('aria-invalid');
    }
    shown = [];
  }

  /**
   * Shows `error` beside the field it names and moves the focus there; false when it names none of the form's.
   * @param {unknown} error
   */
  function show(error) {
    clear();
    if (!(error instanceof ApiError) || !error.param) return false;
    const control = controlOf(error.param);
    if (!control) return false;
    const message = h('p', { class: 'field-error', id: uid('field-error') }, error.message);
    const described = control.getAttribute('aria-describedby');
    control.setAttribute('aria-describedby', described ? `${described} ${message.id}` : message.id);
    control.setAttribute('aria-invalid', 'true');
    const wrapper = control.closest('.field');
    if (wrapper) wrapper.append(message);
    else control.after(message);
    // A field under "More options" is shown before it takes the focus.
    const details = control.closest('details');
    if (details) details.open = true;
    control.focus();
    shown.push({ control, message });
    return true;
  }

  return { show, clear };
}

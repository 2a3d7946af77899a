// @ts-check
/**
 * The playground's file fields: one per asset field a model takes (`inputs` of `GET /v1/models`), each with
 * previews of the files chosen, named as the prompt names them.
 */
import { field, h } from './dom.js';

const ACCEPT = { image: 'image/*', video: 'video/*', audio: 'audio/*' };

/**
 * One file field: `key` tells it from the others, `field` is the request field its files' URLs go to.
 * @typedef {{
 *   key: string,
 *   field: 'image_urls' | 'video_urls' | 'audio_urls',
 *   kind: 'image' | 'video' | 'audio',
 *   label: string,
 *   max: number,
 *   required?: boolean,
 * }} UploadSpec
 */

/**
 * A file field on the page: its input, its element (with the previews) and the files chosen.
 * @typedef {{
 *   spec: UploadSpec,
 *   input: HTMLInputElement,
 *   element: HTMLElement,
 *   files: () => File[],
 *   release: () => void,
 * }} Upload
 */

/**
 * The upload fields for the asset fields a model takes (`inputs`), in the order the prompt names them.
 * @param {string} mode
 * @param {Model['inputs']} inputs
 */
export function uploadSpecs(mode, inputs) {
  /** @type {UploadSpec[]} */
  const specs = [];
  const images = inputs.image_urls;
  if (mode === 'image' && images) {
    specs.push({
      key: 'first',
      field: 'image_urls',
      kind: 'image',
      label: 'First frame',
      max: 1,
      required: images.min > 0,
    });
    // An engine that takes no last frame narrows image_urls to one.
    if (images.max > 1)
      specs.push({ key: 'last', field: 'image_urls', kind: 'image', label: 'Last frame (optional)', max: 1 });
  }
  if (mode === 'reference') {
    const { video_urls: videos, audio_urls: audios } = inputs;
    if (images)
      specs.push({
        key: 'images',
        field: 'image_urls',
        kind: 'image',
        label: `Images (up to ${images.max})`,
        max: images.max,
      });
    if (videos)
      specs.push({
        key: 'videos',
        field: 'video_urls',
        kind: 'video',
        label: `Videos (up to ${videos.max})`,
        max: videos.max,
      });
    if (audios)
      specs.push({
        key: 'audio',
        field: 'audio_urls',
        kind: 'audio',
        label: `Audio (up to ${audios.max}; the first is the soundtrack)`,
        max: audios.max,
      });
  }
  return specs;
}

/**
 * Whether two upload fields take the same files alike, so that a field keeps its files across models.
 * @param {UploadSpec} a
 * @param {UploadSpec} b
 */
export function sameSpec(a, b) {
  return (
    a.key === b.key && a.label === b.label && a.max === b.max && Boolean(a.required) === Boolean(b.required)
  );
}

/**
 * A file input with previews of what it holds, named as the prompt names them ("image 1").
 * @param {UploadSpec} spec
 * @param {() => void} onChange
 * @returns {Upload}
 */
export function uploadField(spec, onChange) {
  const input = h('input', {
    type: 'file',
    name: spec.key,
    accept: ACCEPT[spec.kind],
    multiple: spec.max > 1,
    required: Boolean(spec.required),
  });
  const previews = h('ul', { class: 'previews', 'aria-label': `${spec.label}: previews` });
  /** @type {string[]} */
  const urls = [];
  input.addEventListener('change', () => {
    for (const url of urls.splice(0)) URL.revokeObjectURL(url);
    const files = [...(input.files ?? [])];
    input.setCustomValidity(files.length > spec.max ? `Choose at most ${spec.max} files.` : '');
    previews.replaceChildren(
      ...files.map((file) => {
        const url = URL.createObjectURL(file);
        urls.push(url);
        const media =
          spec.kind === 'image'
            ? h('img', { src: url, alt: `Preview of ${file.name}` })
            : h(spec.kind, { src: url, controls: true, 'aria-label': `Preview of ${file.name}` });
        return h('li', { class: 'preview' }, media, h('span', {}, file.name));
      }),
    );
    onChange();
  });
  const wrapper = field(spec.label, input);
  wrapper.append(previews);
  return {
    spec,
    input,
    element: wrapper,
    files: () => [...(input.files ?? [])],
    release: () => {
      for (const url of urls.splice(0)) URL.revokeObjectURL(url);
    },
  };
}

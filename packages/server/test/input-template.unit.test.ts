/** Input templates for hosted model marketplaces (engines/hosted/input-template.ts, template-values.ts). */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { InputTemplate } from '../src/engines/hosted/input-template.js';
import { nearestRatio, nearestResolution, templateValues } from '../src/engines/hosted/template-values.js';
import { makeJob } from './helpers/render-jobs.js';

const SEEDANCE_I2V = {
  prompt: '{{prompt}}',
  image_url: '{{image}}',
  end_image_url: '{{last_image}}',
  duration: '{{duration|text}}',
  resolution: '{{resolution}}',
  aspect_ratio: '{{aspect_ratio}}',
  seed: '{{seed}}',
  camera_fixed: false,
};

describe('an input template', () => {
  it('fills typed values, text on request, and leaves out what the job does not have', () => {
    const template = new InputTemplate(SEEDANCE_I2V);
    const job = makeJob('/tmp/x', {
      model: 'videogen-2.0-image-to-video',
      quality: '1080p',
      ratio: '9:16',
      duration: 7,
      seed: 99,
      images: ['/a.png'],
    });
    const values = templateValues(
      job,
      { images: ['data:image/png;base64,AAAA'], videos: [], audios: [] },
      { durations: [5, 10], resolutions: ['480p', '720p'], aspect_ratios: ['16:9', '9:16', '1:1'] },
    );
    assert.deepEqual(template.fill(values), {
      prompt: job.params.prompt,
      image_url: 'data:image/png;base64,AAAA',
      duration: '5',
      resolution: '720p',
      aspect_ratio: '9:16',
      seed: 99,
      camera_fixed: false,
    });
  });

  it('fills {{generate_audio}} as a boolean, or as text with |text', () => {
    const template = new InputTemplate({
      generate_audio: '{{generate_audio}}',
      sound: '{{generate_audio|text}}',
      note: 'sound: {{generate_audio}}',
    });
    for (const generateAudio of [true, false]) {
      const job = makeJob('/tmp/x', { generateAudio });
      const values = templateValues(job, { images: [], videos: [], audios: [] }, {});
      assert.deepEqual(template.fill(values), {
        generate_audio: generateAudio,
        sound: String(generateAudio),
        note: `sound: ${generateAudio}`,
      });
    }
  });

  it('says which inputs it can take by the placeholders it uses', () => {
    assert.deepEqual(new InputTemplate(SEEDANCE_I2V).capabilities(), {
      firstFrame: true,
      lastFrame: true,
      referenceImages: 1,
      referenceVideos: 0,
      referenceAudios: 0,
      audio: false,
    });
    const references = new InputTemplate({
      prompt: '{{prompt}}',
      reference_images: '{{images}}',
      audio: '{{audio_1}}',
      generate_audio: '{{generate_audio}}',
    });
    assert.deepEqual(references.capabilities(), {
      firstFrame: true,
      lastFrame: true,
      referenceImages: Number.POSITIVE_INFINITY,
      referenceVideos: 0,
      referenceAudios: 1,
      audio: true,
    });
  });

  it('refuses an unknown placeholder', () => {
    assert.throws(() => new InputTemplate({ prompt: '{{promt}}' }), /unknown placeholder \{\{promt\}\}/);
  });

  it('maps ratios and resolutions to the nearest the model takes', () => {
    assert.equal(nearestRatio(2520, 1080, ['16:9', '9:16', '1:1']), '16:9');
    assert.equal(nearestRatio(1080, 1350, ['16:9', '9:16', '1:1']), '1:1');
    assert.equal(nearestRatio(1080, 1080), '1:1');
    assert.equal(nearestResolution('1080p', ['480p', '720p']), '720p');
    assert.equal(nearestResolution('480p', ['720p', '1080p']), '720p');
    assert.equal(nearestResolution('720p'), '720p');
  });
});

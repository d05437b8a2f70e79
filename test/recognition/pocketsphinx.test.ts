/** Debian's pocketsphinx on real recordings (pocketsphinx-testdata), with a loose WER bound. */
import assert from 'node:assert/strict';
import { afterEach, describe, test } from 'node:test';
import { PocketsphinxRecognizer, pocketsphinxMissing } from '../../src/speech/recognition/pocketsphinx.js';
import { RecognitionError } from '../../src/speech/recognition/errors.js';
import { wordErrors } from '../../src/speech/recognition/wer.js';
import { execFileSync } from 'node:child_process';
import { librivox, speechSpan, testdataInstalled } from './recordings.js';

describe('pocketsphinx', { skip: (pocketsphinxMissing() || !testdataInstalled()) && 'pocketsphinx or its test data is not installed' }, () => {
  test('recognises the LibriVox sentences with a word error rate under 50 %', async () => {
    const recognizer = new PocketsphinxRecognizer(undefined, 2);
    const clips = librivox();
    const results = await Promise.all(clips.map((clip) => recognizer.transcribe(clip.pcm, { language: 'en' })));
    let errors = 0;
    let words = 0;
    results.forEach((result, i) => {
      const e = wordErrors(clips[i].text, result.text);
      errors += e.errors;
      words += e.words;
      assert.equal(result.language, 'en');
    });
    assert.ok(errors / words < 0.5, `WER ${(errors / words).toFixed(2)}: ${results.map((r) => r.text).join(' | ')}`);
  });

  test('silence gives empty text', async () => {
    const result = await new PocketsphinxRecognizer().transcribe(new Int16Array(16000), { language: 'en' });
    assert.equal(result.text, '');
  });

  test('an aborted turn stops its decoder and rejects', async () => {
    const recognizer = new PocketsphinxRecognizer(undefined, 1);
    const controller = new AbortController();
    const clip = librivox()[0];
    const running = recognizer.transcribe(clip.pcm, { language: 'en', signal: controller.signal });
    // A second turn waits for the only decoder slot; aborting it takes it out of the line.
    const waitingController = new AbortController();
    const waiting = recognizer.transcribe(clip.pcm, { language: 'en', signal: waitingController.signal });
    waitingController.abort();
    await assert.rejects(waiting, /abort/i);
    setTimeout(() => controller.abort(), 50);
    const began = Date.now();
    await assert.rejects(running, /abort/i);
    assert.ok(Date.now() - began < 1500, 'the decoder was not stopped');
    // The slot is free again.
    const after = await recognizer.transcribe(librivox()[1].pcm, { language: 'en' });
    assert.ok(after.text.length > 0);
  });

  test('a missing binary is a clear error', async () => {
    assert.match(pocketsphinxMissing('no-such-pocketsphinx-binary')!, /not installed/);
    const recognizer = new PocketsphinxRecognizer('no-such-pocketsphinx-binary');
    await assert.rejects(
      recognizer.transcribe(new Int16Array(1600), { language: 'en' }),
      (e: Error) => e instanceof RecognitionError && /could not start/.test(e.message),
    );
  });
});

describe('pocketsphinx, live', { skip: (pocketsphinxMissing() || !testdataInstalled()) && 'pocketsphinx or its test data is not installed' }, () => {
  // Every recogniser a test makes is closed after it, so no spare decoder outlives its test.
  const made: PocketsphinxRecognizer[] = [];
  const decoderOf = (...args: ConstructorParameters<typeof PocketsphinxRecognizer>) => {
    const recognizer = new PocketsphinxRecognizer(...args);
    made.push(recognizer);
    return recognizer;
  };
  afterEach(() => Promise.all(made.splice(0).map((r) => r.close())));
  const inPieces = (pcm: Int16Array, samples = 1600) =>
    Array.from({ length: Math.ceil(pcm.length / samples) }, (_, i) => pcm.subarray(i * samples, (i + 1) * samples));

  test('hears turns as they arrive, about as well as the whole-turn decoder, phrase by phrase as partials', async () => {
    const recognizer = decoderOf(undefined, 2);
    const clips = librivox();
    const rate = (texts: string[]) => {
      const sum = texts.reduce(
        (acc, text, i) => {
          const e = wordErrors(clips[i].text, text);
          return { errors: acc.errors + e.errors, words: acc.words + e.words };
        },
        { errors: 0, words: 0 },
      );
      return sum.errors / sum.words;
    };
    const live: string[] = [];
    for (const clip of clips) {
      const stream = recognizer.stream({ language: 'en' })!;
      assert.ok(stream, 'a free decoder slot gives a live stream');
      const partials: string[] = [];
      stream.onPartial = (text) => partials.push(text);
      for (const piece of inPieces(clip.pcm)) {
        stream.push(piece);
        await new Promise((r) => setTimeout(r, 2));
      }
      const result = await stream.finish();
      assert.equal(result.language, 'en');
      // Every partial is a prefix of the final text, and they grow.
      for (const [i, partial] of partials.entries()) {
        assert.ok(result.text.startsWith(partial), `partial ${partial}`);
        if (i) assert.ok(partial.length > partials[i - 1].length);
      }
      live.push(result.text);
    }
    const whole = await Promise.all(clips.map((clip) => recognizer.transcribe(clip.pcm, { language: 'en' })));
    const liveRate = rate(live);
    const wholeRate = rate(whole.map((r) => r.text));
    // Shorter phrases cost the live decoder a little context; it must stay close to the whole-turn one.
    assert.ok(liveRate < 0.5, `live WER ${liveRate.toFixed(2)}: ${live.join(' | ')}`);
    assert.ok(liveRate <= wholeRate + 0.1, `live WER ${liveRate.toFixed(2)} vs whole-turn ${wholeRate.toFixed(2)}`);
  });

  test('a phrase followed by a pause arrives as a partial before the turn is finished', async () => {
    const recognizer = decoderOf(undefined, 1);
    const clip = librivox()[1];
    const stream = recognizer.stream({ language: 'en' })!;
    let partial: string | undefined;
    stream.onPartial = (text) => (partial = text);
    stream.push(clip.pcm);
    stream.push(new Int16Array(16000)); // a second of silence: the decoder's endpointer closes the phrase
    const deadline = Date.now() + 20_000;
    while (partial === undefined && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    assert.ok(partial && partial.length > 0, 'no partial before finish');
    const final = await stream.finish();
    assert.equal(final.text, partial);
  });

  test('a pause told closes the phrase at once, where the decoder would otherwise wait for more audio', async () => {
    const recognizer = decoderOf(undefined, 1);
    const clip = librivox()[1];
    // The sentence and the 80 ms after it (the clip ends there): less silence than the decoder's
    // endpointer needs (250 ms, read in 128 ms blocks), so on its own it waits for more audio.
    assert.ok(clip.pcm.length / 16 - speechSpan(clip.pcm).endMs < 100);
    const stream = recognizer.stream({ language: 'en' })!;
    let partial: string | undefined;
    stream.onPartial = (text) => (partial = text);
    stream.push(clip.pcm);
    assert.equal(stream.settled!(), undefined, 'nothing is settled before the decoder closed a phrase');
    stream.pause!();
    const deadline = Date.now() + 20_000;
    while (partial === undefined && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    assert.ok(partial, 'the pause closed the phrase');
    assert.ok(wordErrors(clip.text, partial).errors / wordErrors(clip.text, partial).words < 0.6, `heard: ${partial}`);
    assert.deepEqual(stream.settled!(), { text: partial, language: 'en' }, 'closed phrases are settled');
    assert.equal((await stream.finish()).text, partial, 'the padding added no words');
    await recognizer.close();
  });

  test('the next turn gets a decoder started ahead; one nobody takes is stopped, and close stops it', async () => {
    const decoders = () =>
      execFileSync('ps', ['-o', 'args=', '--ppid', String(process.pid)], { encoding: 'utf8' })
        .split('\n')
        .filter((line) => line.includes('pocketsphinx_continuous')).length;
    const until = async (want: number) => {
      const deadline = Date.now() + 8000;
      while (decoders() !== want && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      return decoders();
    };
    const recognizer = decoderOf(undefined, 1, 2500);
    assert.equal(await until(0), 0, 'nothing runs before a turn');
    const first = recognizer.stream({ language: 'en' })!;
    assert.equal(await until(2), 2, "the turn's decoder and a spare for the next turn");
    first.push(librivox()[1].pcm.subarray(0, 8000));
    await first.finish();
    assert.equal(await until(1), 1, 'the spare waits');
    const clip = librivox()[1];
    const second = recognizer.stream({ language: 'en' })!;
    second.push(clip.pcm);
    const heard = (await second.finish()).text;
    assert.ok(wordErrors(clip.text, heard).errors / wordErrors(clip.text, heard).words < 0.6, `the spare hears: ${heard}`);
    assert.equal(await until(0), 0, 'the spare started for a third turn is stopped when none comes');
    recognizer.stream({ language: 'en' })!.abort();
    assert.equal(await until(1), 1, 'a new spare after the aborted turn');
    await recognizer.close();
    assert.equal(await until(0), 0, 'close stops the spare');
  });

  test('holds a decoder slot for the turn: none free gives no stream; finish and abort give it back', async () => {
    const recognizer = decoderOf(undefined, 1);
    const first = recognizer.stream({ language: 'en' })!;
    assert.ok(first);
    assert.equal(recognizer.stream({ language: 'en' }), undefined, 'the only slot is taken');
    first.push(librivox()[0].pcm.subarray(0, 8000));
    await first.finish();
    const second = recognizer.stream({ language: 'en' });
    assert.ok(second, 'finish gave the slot back');
    second!.push(librivox()[0].pcm);
    second!.abort();
    await assert.rejects(second!.finish(), RecognitionError);
    // The killed decoder's slot comes back once it has exited.
    const deadline = Date.now() + 5000;
    let third = recognizer.stream({ language: 'en' });
    while (!third && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 20));
      third = recognizer.stream({ language: 'en' });
    }
    assert.ok(third, 'abort gave the slot back');
    third!.abort();
  });

  test('a missing binary is a clear error from the live decoder too, and frees its slot', async () => {
    const recognizer = decoderOf('no-such-pocketsphinx-binary', 1);
    const stream = recognizer.stream({ language: 'en' })!;
    stream.push(new Int16Array(1600));
    await assert.rejects(stream.finish(), (e: Error) => e instanceof RecognitionError && /could not start/.test(e.message));
    const again = recognizer.stream({ language: 'en' });
    assert.ok(again, 'the slot is free again');
    again!.abort();
  });
});

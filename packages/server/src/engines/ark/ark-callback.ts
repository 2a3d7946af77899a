/**
 * Ark's callbacks: with `callback_url` in the create request, Ark POSTs the task object (the body of
 * `GET …/tasks/{id}`) to it whenever the task's status changes (`queued`, `running`, `succeeded`, `failed`), and
 * sends a final one again, three times, when it is not answered within 5 s (volcengine.com/docs/82379/1520757,
 * "callback_url"; BytePlus ModelArk 1520757 the same). Ark signs nothing, so anyone who knows the address can
 * send one: a delivery is read for the task's `id` alone, and only makes the job's next poll happen now. Its
 * `status` and `content` are never believed; the poll reads the task back from Ark.
 */
import type { CallbackVerdict, CallbackVerifier } from '../../ports/provider-callback.js';
import { deliveryObject, upstreamIdOf } from '../callbacks/callback-delivery.js';

export class ArkCallbackVerifier implements CallbackVerifier {
  async verify(delivery: Parameters<CallbackVerifier['verify']>[0]): Promise<CallbackVerdict> {
    const task = deliveryObject(delivery);
    if (!task) return { kind: 'bad_body', message: 'An Ark callback is a task object in JSON.' };
    const id = upstreamIdOf(task.id);
    if (!id) return { kind: 'bad_body', message: 'The task object has no `id`.' };
    return { kind: 'job', upstreamId: id };
  }
}

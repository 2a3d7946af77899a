/** A task's callback deliveries with their attempts, as `videogen webhooks deliveries` shows them. */
import { type PublicDelivery, toPublicDelivery } from '../domain/delivery.js';
import type { DeliveryStore } from '../ports/store.js';

export async function deliveryLog(
  store: Pick<DeliveryStore, 'listDeliveries'>,
  taskId: string,
): Promise<PublicDelivery[]> {
  return (await store.listDeliveries(taskId)).map(toPublicDelivery);
}

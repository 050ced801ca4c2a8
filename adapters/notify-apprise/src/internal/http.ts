// The SDK's one HTTP delivery for channels (timeout, failure text without secrets), under this package's names.
export { deliverServiceRequest as deliver, serviceHostOf as hostOf, type ServiceDelivery as Delivery, type ServiceRequest } from '@holdfast/sdk';

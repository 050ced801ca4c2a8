import { HttpError } from '@holdfast/kernel';

/** 422: the request is well formed but asks for something the archive or the server cannot give (a target outside the window). */
export class UnreachableTarget extends HttpError {
  constructor(message: string) {
    super(422, message);
  }
}
